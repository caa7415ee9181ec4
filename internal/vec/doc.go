// Package vec holds dpgnn's float64 row kernels: the sums of scaled rows
// that sparse and dense products are made of, one row or several rows at a
// time (SumSeqRows), in AVX, AVX2 and AVX-512 assembly on amd64 (chosen
// from the CPU's features) with a pure-Go fallback elsewhere (and on CPUs
// without AVX).
//
// Every kernel adds its terms in increasing order, each product rounded
// before it is added (never a fused multiply-add), so results are
// bit-identical to the scalar loop dst[j] += v·b[j] over the terms in
// order, to gonum's axpy and to gonum's Gemm (which sums each entry over
// the inner index in increasing order), on every architecture.
//
// It also holds the element-wise and row-wise kernels (add, product,
// ReLU, rows, affine rows, scaled rows, row normalisation's gradient,
// Adam, SELU, dropout masks held as bits, and a sparse product's row
// gathered from float32 values under such a mask: SumIdxBits32), the
// column reductions over rows
// (column sums and BatchNorm's statistics and gradient sums, each column
// summed in row order), Exp (math.Exp bit for bit,
// four lanes at a time where math.Exp takes its fused multiply-add path),
// and those of Gaussian noise: the AES-256-CTR keystream the words come
// from (AESCTR, VAES), the ziggurat's fast path over a buffer of random
// words (ZigFast) and the scaling of the draws into a release
// (ScaleAddDiv).
package vec
