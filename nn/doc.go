// Package nn is dpgnn's glue to gorgonia: custom ops (sparse×dense product
// with its transposed gradient, row L2-normalisation, batch and per-sample
// standardisation, and fused forms of what every layer does — MatMul with
// transpose flags, ReLU, SELU, a dropout op, a sparse product of float32
// features gathered under their dropout mask (DropoutSpMM),
// AddRow/MulRow/ScaleRows, RowSums, ConcatCols — that replace gorgonia's
// allocating compositions and broadcasts), parameters and initialisers,
// dropout, losses that keep the per-row loss vector, the Model that
// compiles a training and an evaluation machine over one expression graph,
// and optimisers (Adam, SGD) that work on flat float64 parameter and
// gradient slices so that DP optimisers can hand them privatised gradients.
//
// Graphs are built and differentiated with gorgonia and executed by the
// package's own machine (machine.go): every op writes into an output buffer
// allocated on the first run and reused afterwards, buffers shared between
// nodes whose values are not alive at the same time, so a training step
// allocates almost nothing in steady state. Only a machine's roots (loss,
// gradients, outputs) and nodes marked with Model.Keep hold values after a
// run. Chains of row-wise ops (rowKernel) run a block of rows at a time,
// each block through the whole chain while it is in the cache. The
// arithmetic of the ops is internal/vec's kernels. A Frozen path
// evaluates a copy of the model's parameters and running statistics on
// another goroutine, so a training loop can monitor one epoch while the
// next trains. StartOpTimes makes the machines time their ops and chains
// (StopOpTimes returns the table; dpgnn's DPGNN_OPTIMES).
//
// All values are float64 (features that are all float32 may be held in a
// float32 copy, read back exactly). Graph construction errors are
// programming errors (shape mismatches); Build recovers them into returned
// errors so callers never crash on user input.
package nn
