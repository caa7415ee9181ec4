// Package dpnn builds the privacy nodes of dpgnn's gorgonia models from the
// mechanisms and events of package dp: DP-SGD (per-sample clipping with ghost
// norms over each parameter's nn.PerSampleRule, Gaussian noise, Poisson or
// fixed-size batches, the ledger record of every noisy step) and GCON's
// objective perturbation term. Every node it adds is tagged for `dpgnn
// inspect`.
package dpnn
