// Package methods is the registry of dpgnn's training methods and the
// driver that runs one: it loads a dataset, applies the split, runs the
// method for several seeds and summarises the results into the JSON record.
// Each method lives in its own sub-package (mlp, gcn, gap, progap, gcon,
// ...), wires layers, dp and trainers together and registers itself by name
// in an init function; import methods/all to register every one.
package methods
