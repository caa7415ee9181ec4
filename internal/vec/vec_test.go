package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// randRows is a b of rows×ldb values with some exact zeros, huge and tiny
// magnitudes, so that rounding differences would show.
func randRows(rng *rand.Rand, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		switch rng.IntN(10) {
		case 0:
			b[i] = 0
		case 1:
			b[i] = rng.NormFloat64() * 1e12
		case 2:
			b[i] = rng.NormFloat64() * 1e-9
		default:
			b[i] = rng.NormFloat64()
		}
	}
	return b
}

func same(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for j := range want {
		if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
			t.Fatalf("%s: entry %d is %v, want %v (bit-identical)", what, j, got[j], want[j])
		}
	}
}

// The kernels (assembly where the CPU has it) equal gonum's axpy applied
// term by term (from dst, or from 0 for the Sum forms), bit for bit, for every width up to 70 (every block and
// tail combination), strided and constant factors, and leave the values
// beyond the row untouched.
func TestKernelsMatchAxpyBitForBit(t *testing.T) {
	for _, asm := range []bool{false, true} {
		if asm && !useAVX {
			continue
		}
		saved := useAVX
		useAVX = asm
		rng := rand.New(rand.NewPCG(1, 2))
		for n := 1; n <= 70; n++ {
			for _, k := range []int{1, 2, 5, 33} {
				for _, vinc := range []int{0, 1, 3} {
					ldb := n + rng.IntN(3)
					rows := k + 4
					b := randRows(rng, rows*ldb)
					vals := randRows(rng, max(1, (k-1)*vinc+1))
					idx := make([]int, k)
					for p := range idx {
						idx[p] = rng.IntN(rows)
					}
					init := randRows(rng, n+1)
					// gonum, term by term, into dst[:n]; the guard dst[n] stays.
					want := append([]float64(nil), init...)
					got := make([]float64, 0, n+1)
					for l := 0; l < k; l++ {
						floats.AddScaled(want[:n], vals[l*vinc], b[l*ldb:l*ldb+n])
					}
					got = append(got[:0], init...)
					AxpySeq(got[:n], vals, vinc, k, b, ldb)
					same(t, "AxpySeq", got, want)

					// SumIdx and SumSeq: the same from a zero start, dst unread.
					stale := append([]float64(nil), init...)
					for j := range stale[:n] {
						stale[j] = math.NaN()
					}
					want = append(want[:0], init...)
					clear(want[:n])
					for p, r := range idx {
						floats.AddScaled(want[:n], vals[p*vinc], b[r*ldb:r*ldb+n])
					}
					got = append(got[:0], stale...)
					SumIdx(got[:n], vals, vinc, idx, b, ldb)
					same(t, "SumIdx", got, want)
					clear(want[:n])
					for l := 0; l < k; l++ {
						floats.AddScaled(want[:n], vals[l*vinc], b[l*ldb:l*ldb+n])
					}
					got = append(got[:0], stale...)
					SumSeq(got[:n], vals, vinc, k, b, ldb)
					same(t, "SumSeq", got, want)
				}
			}
		}
		useAVX = saved
	}
}

// Rows or factors outside their slices panic instead of reading memory.
func TestKernelsCheckBounds(t *testing.T) {
	b := make([]float64, 12) // 3 rows of 4
	dst := make([]float64, 4)
	for name, f := range map[string]func(){
		"row past end":    func() { SumIdx(dst, []float64{1}, 0, []int{3}, b, 4) },
		"negative row":    func() { SumIdx(dst, []float64{1}, 0, []int{-1}, b, 4) },
		"too few factors": func() { SumIdx(dst, []float64{1}, 1, []int{0, 1}, b, 4) },
		"width > stride":  func() { AxpySeq(make([]float64, 5), []float64{1}, 0, 1, b, 4) },
		"too many rows":   func() { AxpySeq(dst, []float64{1}, 0, 4, b, 4) },
	} {
		for _, asm := range []bool{false, useAVX} {
			func() {
				saved := useAVX
				useAVX = asm
				defer func() {
					useAVX = saved
					if recover() == nil {
						t.Errorf("%s (assembly %v): no panic", name, asm)
					}
				}()
				f()
			}()
		}
	}
}

// BenchmarkSumIdx64 is one row of a sparse product at width 64 with 18
// terms (cora's average features per node).
func BenchmarkSumIdx64(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randRows(rng, 1433*64)
	idx := make([]int, 18)
	for p := range idx {
		idx[p] = rng.IntN(1433)
	}
	vals := randRows(rng, 18)
	dst := make([]float64, 64)
	for _, mode := range []struct {
		name string
		f    func()
	}{
		{"kernel", func() { SumIdx(dst, vals, 1, idx, x, 64) }},
		{"gonum", func() {
			for p, r := range idx {
				floats.AddScaled(dst, vals[p], x[r*64:r*64+64])
			}
		}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				mode.f()
			}
		})
	}
}

// AdamStep equals the scalar update loop bit for bit over several steps,
// for lengths with and without a tail of 1–3 elements.
func TestAdamStepMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 3, 4, 7, 64, 1001} {
		p, g := randRows(rng, n), randRows(rng, n)
		m, v := make([]float64, n), make([]float64, n)
		rp := append([]float64(nil), p...)
		rm, rv := make([]float64, n), make([]float64, n)
		for step := 1; step <= 5; step++ {
			c := AdamCoef{WeightDecay: 5e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8,
				Step: 0.01 / (1 - math.Pow(0.9, float64(step))), Corr2: 1 - math.Pow(0.999, float64(step))}
			AdamStep(p, g, m, v, c)
			for j := range rp {
				gj := g[j] + c.WeightDecay*rp[j]
				rm[j] = c.Beta1*rm[j] + (1-c.Beta1)*gj
				rv[j] = c.Beta2*rv[j] + (1-c.Beta2)*gj*gj
				rp[j] -= c.Step * rm[j] / (math.Sqrt(rv[j]/c.Corr2) + c.Eps)
			}
			same(t, "Adam p", p, rp)
			same(t, "Adam m", m, rm)
			same(t, "Adam v", v, rv)
			g = randRows(rng, n)
		}
	}
}

// BenchmarkAdamStep updates a first layer's 1433×64 weights.
func BenchmarkAdamStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1433 * 64
	p, g := randRows(rng, n), randRows(rng, n)
	m, v := make([]float64, n), make([]float64, n)
	c := AdamCoef{WeightDecay: 5e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 0.01, Corr2: 0.5}
	for _, asm := range []bool{true, false} {
		name := "go"
		if asm {
			name = "kernel"
		}
		b.Run(name, func(b *testing.B) {
			saved := useAVX
			useAVX = asm && useAVX
			defer func() { useAVX = saved }()
			for b.Loop() {
				AdamStep(p, g, m, v, c)
			}
		})
	}
}

// The element-wise kernels equal their scalar loops bit for bit, on
// lengths with tails and on special values (±0, ±∞, NaN of either sign,
// subnormals).
func TestElementwiseMatchesScalar(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(math.Float64bits(math.NaN()) | 1<<63), 5e-324, -5e-324}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 4, 10, 67} {
		x, y := randRows(rng, n), randRows(rng, n)
		for i := range x {
			if i < len(special) {
				x[i] = special[i]
				y[i] = special[len(special)-1-i]
			}
		}
		scalar := map[string]func(a, b float64) float64{
			"Add": func(a, b float64) float64 { return a + b },
			"Mul": func(a, b float64) float64 { return a * b },
			"ReLU": func(a, _ float64) float64 {
				if !(a < 0) {
					return a
				}
				return 0
			},
			"ReLUGrad": func(a, b float64) float64 {
				if a >= 0 {
					return b
				}
				return 0
			},
		}
		kernel := map[string]func(d, a, b []float64){
			"Add": Add, "Mul": Mul, "ReLU": func(d, a, _ []float64) { ReLU(d, a) }, "ReLUGrad": ReLUGrad,
		}
		for name, f := range scalar {
			want := make([]float64, n)
			for i := range want {
				want[i] = f(x[i], y[i])
			}
			got := make([]float64, n)
			kernel[name](got, x, y)
			for i := range want {
				// NaN payloads may differ between scalar and vector units;
				// a NaN must stay a NaN.
				if math.IsNaN(want[i]) && math.IsNaN(got[i]) {
					continue
				}
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s n=%d entry %d (%v, %v): %v, want %v", name, n, i, x[i], y[i], got[i], want[i])
				}
			}
		}
	}
}

// TestAddSums4MatchesScalar: the combined partial sums equal the scalar
// expression bit for bit, with the assembly and without, over special
// values and lengths around the four-entry blocks.
func TestAddSums4MatchesScalar(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -5e-324, 1e308}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, asm := range []bool{false, true} {
		for _, n := range []int{1, 3, 4, 5, 8, 67} {
			var s [4][]float64
			for k := range s {
				s[k] = randRows(rng, n)
				for i := range s[k] {
					if rng.IntN(4) == 0 {
						s[k][i] = special[rng.IntN(len(special))]
					}
				}
			}
			dst := randRows(rng, n)
			want := append([]float64(nil), dst...)
			for i := range want {
				want[i] += (s[1][i] + s[3][i]) + (s[0][i] + s[2][i])
			}
			withAVX(asm, func() { AddSums4(dst, s[0], s[1], s[2], s[3]) })
			for i := range want {
				if math.IsNaN(want[i]) && math.IsNaN(dst[i]) {
					continue
				}
				if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
					t.Fatalf("asm %v, n=%d, entry %d: %v, want %v", asm, n, i, dst[i], want[i])
				}
			}
		}
	}
}

// AddRows and MulRows equal the per-row loops bit for bit, for widths with
// and without the one-call kernel.
func TestRowsMatchScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, d := range []int{1, 3, 4, 8, 16, 20, 32, 36, 37} { // strips of 16, then of 4
		rows := 9
		x, b := randRows(rng, rows*d), randRows(rng, d)
		for name, f := range map[string]func(dst, x, b []float64){"AddRows": AddRows, "MulRows": MulRows} {
			got := make([]float64, rows*d)
			f(got, x, b)
			for i := range got {
				want := x[i] + b[i%d]
				if name == "MulRows" {
					want = x[i] * b[i%d]
				}
				if math.Float64bits(got[i]) != math.Float64bits(want) {
					t.Fatalf("%s d=%d entry %d: %v, want %v", name, d, i, got[i], want)
				}
			}
		}
	}
}

// MulBits gives the products x·keep and x·0 of the scalar form, bit for
// bit (−0 for negative x, NaN for NaN and ±Inf dropped), with the kernel
// and without, at offsets that do and do not start a word and lengths
// with a tail.
func TestMulBitsMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	bits := make([]uint64, 40)
	for i := range bits {
		bits[i] = rng.Uint64()
	}
	bits[3] = 0
	bits[4] = ^uint64(0)
	for _, tc := range []struct{ from, n int }{{0, 0}, {0, 64}, {0, 1000}, {5, 700}, {64, 128}, {63, 2}, {100, 1500}, {1, 2000}} {
		x := randRows(rng, tc.n)
		for i := 0; i < tc.n; i += 7 {
			x[i] = []float64{math.Inf(1), math.Inf(-1), math.NaN(), -0.0, -3}[i/7%5]
		}
		for _, asm := range []bool{false, true} {
			dst := make([]float64, tc.n)
			withAVX(asm, func() { MulBits(dst, x, bits, tc.from, 1.25) })
			for i := range dst {
				f := 0.0
				if b := tc.from + i; bits[b>>6]>>(b&63)&1 != 0 {
					f = 1.25
				}
				if want := x[i] * f; math.Float64bits(dst[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(dst[i])) {
					t.Fatalf("from %d, n %d, entry %d (assembly %v): %v, want %v", tc.from, tc.n, i, asm, dst[i], want)
				}
			}
		}
	}
}

// ScatterCSR over a CSR pattern gives, from a cleared out, the strips of
// Aᵀ·X that SumIdx gives over Aᵀ's rows, bit for bit, kernel and Go form
// alike: with factors, with one factor for all, from an entry offset, with
// repeated columns in a row, negative zeros and empty rows; and it refuses a
// column index outside out.
func TestScatterCSRMatchesSumIdx(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const rows, cols, k = 57, 23, 48
	indptr := []int{5} // entries start at 5: idx and vals carry a prefix
	idx := []int{9, 9, 9, 9, 9}
	for i := 0; i < rows; i++ {
		n := rng.IntN(6)
		if i%11 == 0 {
			n = 0
		}
		for range n {
			idx = append(idx, rng.IntN(cols))
		}
		if i == 3 {
			idx = append(idx, 4, 4) // a column twice in one row
		}
		indptr = append(indptr, len(idx))
	}
	vals := randRows(rng, len(idx))
	vals[7] = -0.0
	x := randRows(rng, rows*k)
	x[5] = -0.0
	for _, vinc := range []int{1, 0} {
		// the reference: SumIdx over the transpose's rows, entries in row order
		want := make([]float64, cols*k)
		for j := 0; j < cols; j++ {
			var rowsOf []int
			var fs []float64
			for i := 0; i < rows; i++ {
				for p := indptr[i]; p < indptr[i+1]; p++ {
					if idx[p] == j {
						rowsOf = append(rowsOf, i)
						fs = append(fs, vals[p*vinc])
					}
				}
			}
			if len(fs) == 0 {
				fs = []float64{0}
			}
			SumIdx(want[j*k:(j+1)*k], fs, 1, rowsOf, x, k)
		}
		for _, asm := range []bool{false, true} {
			got := make([]float64, cols*k)
			withAVX(asm, func() {
				for s := 0; s < k; s += ScatterWidth {
					ScatterCSR(got[s:], k, cols, indptr, idx, vals, vinc, x[s:], k)
				}
			})
			for e := range want {
				if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
					t.Fatalf("vinc %d, assembly %v, entry %d: %v, want %v", vinc, asm, e, got[e], want[e])
				}
			}
			bad := slices.Clone(idx)
			bad[len(bad)-1] = cols
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("assembly %v: a column index past out was not refused", asm)
					}
				}()
				withAVX(asm, func() { ScatterCSR(make([]float64, cols*k), k, cols, indptr, bad, vals, vinc, x, k) })
			}()
		}
	}
}

// SumSeqRows and AxpySeqRows give each row the bits of SumSeq and AxpySeq,
// with the kernels and without: four narrow rows at a time at every width
// up to 8, two rows at a time at and between strips of 16, the rows left
// over one at a time (four wide rows at a time with AVX-512); with -0
// factors, row and factor strides with slack, and factors read down a
// column (a transposed matrix).
func TestSeqRowsMatchesOneRow(t *testing.T) {
	saved := hasAVX512
	defer func() { hasAVX512 = saved }()
	for _, wide := range []bool{false, true} {
		hasAVX512 = wide && saved // with and without the 512-bit kernel
		testSeqRows(t)
	}
}

func testSeqRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for _, asm := range []bool{false, true} {
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 35, 64} {
			for _, k := range []int{1, 2, 7, 48} {
				for _, vinc := range []int{0, 1, 5} {
					rows := 1 + rng.IntN(11)
					ldb, ldd := n+rng.IntN(3), n+rng.IntN(3)
					rinc := rng.IntN(3) + (k-1)*vinc + 1
					if rng.IntN(2) == 0 {
						rinc, vinc = 1, max(vinc, rows) // a transposed factor matrix
					}
					b := randRows(rng, k*ldb)
					vals := randRows(rng, (rows-1)*rinc+(k-1)*vinc+1)
					vals[0], b[0] = math.Copysign(0, -1), math.Copysign(0, -1)
					init := randRows(rng, (rows-1)*ldd+n+rng.IntN(2))
					for _, zero := range []bool{true, false} {
						want, got := slices.Clone(init), slices.Clone(init)
						withAVX(asm, func() {
							for r := range rows {
								w := want[r*ldd : r*ldd+n]
								if zero {
									SumSeq(w, vals[r*rinc:], vinc, k, b, ldb)
								} else {
									AxpySeq(w, vals[r*rinc:], vinc, k, b, ldb)
								}
							}
							if zero {
								SumSeqRows(got, rows, n, ldd, vals, rinc, vinc, k, b, ldb)
							} else {
								AxpySeqRows(got, rows, n, ldd, vals, rinc, vinc, k, b, ldb)
							}
						})
						for j := range want {
							if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
								t.Fatalf("asm %v rows %d n %d k %d ldd %d rinc %d vinc %d zero %v entry %d: %v, want %v", asm, rows, n, k, ldd, rinc, vinc, zero, j, got[j], want[j])
							}
						}
					}
				}
			}
		}
	}
}

// AffineRows gives the bits of AddRows, MulRows, MulRows and AddRows in
// turn, with the kernel and without, at widths around its steps, in place
// and not.
func TestAffineRowsMatchesFourPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, asm := range []bool{false, true} {
		for _, d := range []int{1, 3, 4, 5, 8, 12, 15, 16, 17, 48} {
			for _, rows := range []int{1, 2, 5} {
				x := randRows(rng, rows*d)
				a, s, g, b := randRows(rng, d), randRows(rng, d), randRows(rng, d), randRows(rng, d)
				x[0], a[d-1] = math.Copysign(0, -1), math.Inf(1)
				want := make([]float64, rows*d)
				withAVX(asm, func() {
					AddRows(want, x, a)
					MulRows(want, want, s)
					MulRows(want, want, g)
					AddRows(want, want, b)
				})
				got := make([]float64, rows*d)
				inPlace := slices.Clone(x)
				withAVX(asm, func() {
					AffineRows(got, x, a, s, g, b)
					AffineRows(inPlace, inPlace, a, s, g, b)
				})
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
						t.Fatalf("asm %v %d×%d entry %d: %v, want %v", asm, rows, d, i, got[i], want[i])
					}
					if math.Float64bits(inPlace[i]) != math.Float64bits(got[i]) && !(math.IsNaN(got[i]) && math.IsNaN(inPlace[i])) {
						t.Fatalf("asm %v %d×%d entry %d in place: %v, want %v", asm, rows, d, i, inPlace[i], got[i])
					}
				}
			}
		}
	}
}

// Exp equals math.Exp bit for bit: on random arguments across the kernel's
// range and beyond it (where math.Exp's special cases apply: overflow,
// subnormal results, ±Inf, NaN), with and without the kernel, at lengths
// with tails; and the kernel is in use where math.Exp takes its FMA path.
func TestExpMatchesMath(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	special := []float64{0, math.Copysign(0, -1), 700, -700, math.Nextafter(700, 800), math.Nextafter(-700, -800), 709.7, 709.8, -745, -746,
		-708.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-300, -1e-300, 0.5 * math.Ln2, -0.5 * math.Ln2, 1e-17}
	for _, asm := range []bool{false, true} {
		for _, n := range []int{1, 3, 4, 7, 64, 1001} {
			x := make([]float64, n)
			for i := range x {
				switch i % 3 {
				case 0:
					x[i] = rng.Float64()*1600 - 800
				case 1:
					x[i] = rng.NormFloat64() * 3
				default:
					x[i] = -rng.ExpFloat64() * 10
				}
				if k := i % 41; k < len(special) {
					x[i] = special[k]
				}
			}
			got := make([]float64, n)
			withAVX(asm, func() { Exp(got, x) })
			for i, v := range x {
				if w := math.Exp(v); math.Float64bits(got[i]) != math.Float64bits(w) && !(math.IsNaN(w) && math.IsNaN(got[i])) {
					t.Fatalf("asm %v n %d: Exp(%v) = %v, math.Exp %v", asm, n, v, got[i], w)
				}
			}
		}
	}
	if useAVX && hasAVX2 && hasFMA && !useExpFMA {
		t.Error("the CPU has AVX2 and FMA but the Exp kernel is off: its start-up check failed")
	}
}

// ScaleRows and RowNormGrad give the bits of their formulas entry by entry,
// with the kernels and without, at widths around the kernels' steps.
func TestRowKernelsMatchFormulas(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, asm := range []bool{false, true} {
		for _, k := range []int{1, 3, 4, 5, 8, 12, 16, 17, 48} {
			rows := 1 + rng.IntN(6)
			x, g := randRows(rng, rows*k), randRows(rng, rows*k)
			f, norm, dot := randRows(rng, rows), randRows(rng, rows), randRows(rng, rows)
			x[0] = math.Copysign(0, -1)
			wantS, wantG := make([]float64, rows*k), make([]float64, rows*k)
			for i := range rows {
				for c := range k {
					p := i*k + c
					wantS[p] = x[p] * f[i]
					q := float64(x[p]/norm[i]) * dot[i]
					wantG[p] = (g[p] - q) / norm[i]
				}
			}
			gotS, gotG := make([]float64, rows*k), make([]float64, rows*k)
			withAVX(asm, func() {
				ScaleRows(gotS, x, f, k)
				RowNormGrad(gotG, x, g, norm, dot, k)
			})
			for p := range wantS {
				if math.Float64bits(gotS[p]) != math.Float64bits(wantS[p]) || math.Float64bits(gotG[p]) != math.Float64bits(wantG[p]) {
					t.Fatalf("asm %v %d×%d entry %d: ScaleRows %v, want %v; RowNormGrad %v, want %v", asm, rows, k, p, gotS[p], wantS[p], gotG[p], wantG[p])
				}
			}
		}
	}
}

// PrefetchRows is only a hint: it skips indices outside the rows (no fault
// on -1 or a huge index) and changes nothing.
func TestPrefetchRowsIsAHint(t *testing.T) {
	b := []float64{1, 2, 3, 4, 5, 6}
	want := slices.Clone(b)
	idx := []int{0, 2, -1, 1 << 40, 1}
	for _, asm := range []bool{false, true} {
		withAVX(asm, func() { PrefetchRows(idx, b, 2, 3) })
	}
	PrefetchRows(nil, b, 2, 3)
	if !slices.Equal(b, want) {
		t.Fatalf("PrefetchRows changed b: %v", b)
	}
}

// TestNorm2: the scaled norm of rows whose squares underflow or overflow,
// and √s itself for ordinary rows (the same bits).
func TestNorm2(t *testing.T) {
	for _, tc := range []struct {
		r    []float64
		want float64
	}{
		{[]float64{3, 4}, 5},
		{[]float64{0, 0}, 0},
		{[]float64{1.6e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162, 1.5e-162}, math.Sqrt(1.6*1.6+7*1.5*1.5) * 1e-162},
		{[]float64{5e-324, 0}, 5e-324},
		{[]float64{3e200, 4e200}, 5e200},
	} {
		s := 0.0
		for _, v := range tc.r {
			s += v * v
		}
		got := Norm2(tc.r, s)
		if math.Abs(got-tc.want) > 1e-14*tc.want {
			t.Errorf("Norm2(%v) = %v, want %v", tc.r, got, tc.want)
		}
		if s >= NormTiny && !math.IsInf(s, 0) && got != math.Sqrt(s) {
			t.Errorf("Norm2(%v) = %v, not √s = %v for an ordinary row", tc.r, got, math.Sqrt(s))
		}
	}
}
