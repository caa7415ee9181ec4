// Package gen owns dpgnn's seeded synthetic graphs: the contextual
// stochastic block model (CSBM), the chain graphs chain-s … chain-x, the
// signed SBM, and the small adversarial graphs the privacy audits run on
// (stars, double stars sharing leaves, paths, power-law graphs, the
// spread graph that breaks degree sampling). Every generator is a
// function of its configuration and seed alone, checks its memory estimate
// against graphs.MemoryLimit before it allocates, and returns a validated
// graphs.Graph.
package gen
