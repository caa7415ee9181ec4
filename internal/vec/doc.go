// Package vec holds dpgnn's float64 row kernels: the sums of scaled rows
// that sparse and dense products are made of, in AVX assembly on amd64
// with a pure-Go fallback elsewhere (and on CPUs without AVX).
//
// Every kernel adds its terms in increasing order, each product rounded
// before it is added (never a fused multiply-add), so results are
// bit-identical to the scalar loop dst[j] += v·b[j] over the terms in
// order, to gonum's axpy and to gonum's Gemm (which sums each entry over
// the inner index in increasing order), on every architecture.
//
// It also holds the element-wise kernels (add, product, ReLU, rows, Adam,
// SELU, dropout masks held as bits) and those of Gaussian noise: the
// AES-256-CTR keystream the words come from (AESCTR, VAES), the ziggurat's
// fast path over a buffer of random words (ZigFast) and the scaling of the
// draws into a release (ScaleAddDiv).
package vec
