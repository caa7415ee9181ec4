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
package dpnn
