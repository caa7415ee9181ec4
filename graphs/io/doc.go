// Package graphio (import path graphs/io) owns dpgnn's dataset files:
// loaders for the npz "sparsegraph", geom-gcn and signed edge-list formats
// (Load resolves a dataset name, a path, or a generated graph's name),
// SaveNPZ, atomic writes (WriteFileAtomic, OutputPath), and Fetch, which
// downloads the published files of the real datasets (listed with their
// URLs, sizes and SHA-256 in DatasetManifest) and keeps only files whose
// checksum matches.
//
// Loaders validate and return errors that name the file, the array or
// line, and the problem; nothing panics on bad input. Inputs that cannot
// be a usable dataset are refused before they allocate: empty graphs,
// graphs without a feature column, feature or class ids far beyond what
// the file plausibly holds, and sizes whose estimated memory exceeds
// graphs.MemoryLimit. Every loader reserves what it allocates against one
// budget before allocating it, from sizes in headers (npz) or from a first
// pass over a text file, so a hostile archive is refused having read its
// headers; input files must be regular files (a named pipe is refused, not
// waited on).
package graphio
