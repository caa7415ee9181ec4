// Package nn is dpgnn's glue to gorgonia: custom ops (sparse×dense product
// with its transposed gradient, row L2-normalisation, batch and per-sample
// standardisation, and fused forms of what every layer does — MatMul with
// transpose flags, SELU, AddRow/MulRow/ScaleRows, ConcatCols — that replace
// gorgonia's allocating compositions and broadcasts), parameters and initialisers, dropout, losses that keep
// the per-row loss vector, the Model that compiles a training and an
// evaluation tape machine over one expression graph, and optimisers (Adam,
// SGD) that work on flat float64 parameter and gradient slices so that DP
// optimisers can hand them privatised gradients.
//
// All values are float64. Graph construction errors are programming errors
// (shape mismatches); Build recovers them into returned errors so callers
// never crash on user input.
package nn
