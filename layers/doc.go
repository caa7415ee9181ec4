// Package layers holds dpgnn's reusable layers, built from nn: Linear, MLP,
// BatchNorm and GroupNorm(1) with their affine parameters, message passing
// (Aggregate: sum, mean or max over a row's in-neighbours; SAGEConv, PyG's
// GraphSAGE layer built on it), the GCN convolution (GCNConv) and the plan of the rows a stack of them computes
// when only some output rows are read (Reach), personalised-PageRank
// propagation (PPR: GCON's R_m X, DPAR's inference), aggregation
// perturbation (NAP) and CARIBOU's contractive graph layer and PCMP with
// their sensitivities. A layer owns its
// parameters and can be applied to several inputs (a training path over the
// training rows and an evaluation path over all nodes share weights).
// Each layer's doc gives its formula, defaults and shapes; String() gives a
// one-line description for graph listings.
package layers
