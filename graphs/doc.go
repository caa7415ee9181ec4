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
// empty graphs, graphs without a feature column, feature or class ids far
// beyond what the file plausibly holds, and sizes whose estimated memory
// exceeds MemoryLimit (16 GB, or $DPGNN_MAX_MEMORY). Every loader reserves
// what it allocates against one budget before allocating it, from sizes in
// headers (npz) or from a first pass over a text file (loadBudget), so a
// hostile archive is refused having read its headers; input files must be
// regular files (a named pipe is refused, not waited on). Splits that leave no training or no test node are
// errors; legal but doubtful input (a class without training nodes) is
// reported on Warnings. Files are written atomically (WriteFileAtomic).
// Fetch downloads the published files of the real datasets (listed with
// their URLs, sizes and SHA-256 in DatasetManifest) and keeps only files
// whose checksum matches.
package graphs
