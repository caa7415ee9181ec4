// Package attacks audits trained models with privacy attacks that query
// them: LinkTeller (Wu et al., S&P 2022), which recovers edges from the
// influence of one node's features on another's posterior, and G-MIA
// (Olatunji et al., TPS-ISA 2021), a shadow-model membership inference
// attack on nodes in the "train on subgraph, test on full graph" (TSTF)
// setting. Both report the ROC AUC of their scores and an empirical ε lower
// bound from them (EpsilonBound), which CARIBOU's privacy auditing module
// compares with the claimed ε.
package attacks
