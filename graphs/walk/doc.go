// Package walk owns ASGL's sampling on signed graphs (Ke et al., KDD 2026,
// appendix G–K; GraphGAN's graph softmax): the walk graph of G+ or G−
// under a degree bound (package degree), depth-limited signed BFS trees,
// constrained graph-softmax walks down them, window pairs with their
// balance-theory signs, keyed per-root samplers, and the occurrence bound
// R_{D,L} with its proofs (Claims 1 and 2 in signedwalk.go). Used by
// methods/asgl and the GAN players of layers.
package walk
