// Package graphs owns graph data for dpgnn: the Graph type with its CSR
// adjacency, dense or sparse features, labels and index splits; loaders for
// the npz "sparsegraph", geom-gcn and signed edge-list formats; seeded
// synthetic generators (contextual SBM, chains, signed SBM); transforms
// (symmetrise, self-loops, degree bounding, induced subgraphs); splits;
// normalised adjacencies; personalised PageRank (ISTA, power iteration,
// propagation); signed BFS trees and graph-softmax walks with their
// occurrence bound; node-level degree bounds; and dataset statistics.
//
// Everything here is pure data and algebra: transforms return new values and
// never mutate their inputs, loaders validate and return errors that name the
// file, the array or line, and the problem. Nothing panics on bad input.
// Inputs that cannot be a usable dataset are refused before they allocate:
// empty graphs, feature or class ids far beyond what the file plausibly
// holds, and sizes whose estimated memory exceeds MemoryLimit (16 GB, or
// $DPGNN_MAX_MEMORY). Splits that leave no training or no test node are
// errors; legal but doubtful input (a class without training nodes) is
// reported on Warnings. Files are written atomically (WriteFileAtomic).
// Fetch downloads the published files of the real datasets (listed with
// their URLs, sizes and SHA-256 in DatasetManifest) and keeps only files
// whose checksum matches.
package graphs
