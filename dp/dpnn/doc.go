// Package dpnn builds the privacy nodes of dpgnn's gorgonia models from the
// mechanisms and events of package dp: DP-SGD (per-sample clipping with ghost
// norms over each parameter's nn.PerSampleRule, Gaussian noise, Poisson or
// fixed-size batches, the ledger record of every noisy step) and GCON's
// objective perturbation term. Every node it adds is tagged for `dpgnn
// inspect`.
//
// DP-SGD's sensitivity rests on the per-sample rules the layers record
// (nn.Model.Record registers one for a custom op): BuildSGD refuses a
// parameter without a rule, and nn.Model.CheckPerSample, given the same
// per-row loss and fill function as SGD.Step, tests every recorded rule
// against per-example gradients computed one example at a time.
//
// Examples are the unit of DP-SGD on a graph: a method declares them
// (blocks of rows, the adjacency over them, the occurrence bound R and
// Change), and the framework lays out every batch, builds its row groups
// and refuses any row-mixing product of the training path (nn.RowMixer:
// SpMM, SpMax, DropoutSpMM over the batch rows) whose entries join two
// examples, at build time for one-row examples and at every step
// otherwise. Two shapes beyond blocks: pooled examples (Examples.Weights:
// each example's rows summed into one output row, a non-square product
// checked as a pool at every step; DPAR's Π rows, over a public id universe
// with absent ids, Examples.Present) and generated examples
// (Examples.Generated: rows drawn by the fill at step time and tagged by
// it, the tags checked; ASGL's walk pairs, with fixed-size batches without
// replacement, PrivateConfig.WithoutReplacement). Beside nn.CheckRowLocal's
// classes, the construction runs the step once on a synthetic batch in
// several layouts and refuses a path whose examples' norms or clipped
// gradients depend on where they lie or on each other, or exceed the clip
// (checkLayouts). Private (with
// methods/run.MakePrivate) is the one call that
// turns a model, its per-row loss and its Examples into the calibrated,
// self-recording DP-SGD construction a trainer runs.
package dpnn
