package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dropout masks are drawn from the model's seeded stream, so runs repeat
// exactly (gorgonia's own Dropout does not take a seed), and cheaply: one
// 64-bit draw decides 64/w entries, w bits each (dropLanes), and a mask is
// filled in blocks of maskBlock entries in parallel, block b from its own
// PCG stream (seed, b) with one seed per fill from the model's stream, so a
// mask does not depend on the number of CPUs.
const maskBlock = 1 << 14

// dropLanes returns the lane width w and threshold T of the test "drop
// when the w-bit lane is < T" for dropout probability p ∈ (0, 1): the
// narrowest w ∈ {1, 2, 4, 8, 16, 32} with p·2^w an integer, which makes the
// drop probability T/2^w exactly p (p = 0.5: one bit per entry); otherwise
// w = 32 and T = ⌈p·2³²⌉, a drop probability within 2⁻³² above p.
func dropLanes(p float64) (w uint, t uint64) {
	for w = 1; w < 32; w *= 2 {
		x := p * float64(uint64(1)<<w)
		if x == math.Floor(x) {
			return w, uint64(x)
		}
	}
	return 32, uint64(math.Ceil(p * (1 << 32)))
}

// fillMask draws a mask of n entries as bits (bit i of bits set: entry i
// kept, probability 1−p), from the stream seeded by seed, in parallel over
// blocks. A mask of bits is 1/64 of a mask of float64 entries, so drawing
// it and applying it (vec.MulBits) read and write little memory; at p = ½
// each drawn word is 64 entries as it is.
func fillMask(bits []uint64, n int, p float64, seed uint64) {
	w, t := dropLanes(p)
	lanes := 64 / int(w)
	lane := uint64(1)<<w - 1
	blocks := (n + maskBlock - 1) / maskBlock
	parallel.Rows(blocks, n, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			rng := rand.NewPCG(seed, uint64(b))
			first, last := b*maskBlock, min((b+1)*maskBlock, n)
			words := bits[first/64 : (last+63)/64] // maskBlock is a multiple of 64
			if w == 1 {
				// t = 1: an entry is kept when its bit is 1
				for k := range words {
					words[k] = rng.Uint64()
				}
			} else {
				// a draw's lanes never straddle two words: 64/w lanes
				// per draw, and blocks start at a multiple of 64
				for k := range words {
					var word uint64
					for i := 0; i < 64 && first+64*k+i < last; {
						u := rng.Uint64()
						for l := 0; l < lanes; l++ {
							// (x − t) >> 63 is 1 exactly when the lane x < t (both below 2³²)
							word |= (((u&lane)-t)>>63 ^ 1) << i
							u >>= w
							i++
						}
					}
					words[k] = word
				}
			}
			if r := last & 63; r != 0 && last == n { // no bits past the last entry
				words[len(words)-1] &= 1<<r - 1
			}
		}
	})
}

// dropout holds a mask of Bernoulli(1−p) bits, redrawn for every training
// run: its op (maskOp) multiplies its input by 1/(1−p) where a bit is set
// and by 0 where it is not; in evaluation the op passes its input through.
type dropout struct {
	id   int
	p    float64
	rng  *rand.Rand
	n    int      // entries
	bits []uint64 // the mask
	// onTrainPath is false for masks the training machine never runs (an
	// evaluation path over all nodes): they are never drawn.
	onTrainPath bool
	ones        bool // evaluation: the op is the identity
	// rows (DropoutRows): row r of the op's input takes the mask's row
	// rows[r] (rows of width entries); nil: the input is the whole mask.
	// sel holds those rows' bits in the input's order, copied from the
	// mask whenever it is drawn.
	rows  []int
	width int
	sel   []uint64
}

// SetTraining draws a fresh mask for a training run. A mask off the
// training path stays the identity and is not written (a Frozen path may be
// reading it on another goroutine).
func (d *dropout) SetTraining(t bool) {
	if !d.onTrainPath {
		return
	}
	d.ones = !t
	if !d.ones {
		fillMask(d.bits, d.n, d.p, d.rng.Uint64())
		if d.rows != nil {
			// The rows' bits, in the input's order: the op then masks
			// its input in one pass, as over a whole matrix (a call per
			// row took 160 ms of a 10⁶-node GCN epoch).
			for r, row := range d.rows {
				copyBits(d.sel, r*d.width, d.bits, row*d.width, d.width)
			}
		}
	}
}

// copyBits copies the n bits of src from bit so on into dst from bit do on
// (bit i of a mask is bit i&63 of word i>>6), leaving dst's other bits.
func copyBits(dst []uint64, do int, src []uint64, so, n int) {
	for n > 0 {
		k := min(64, n)
		i, s := so>>6, uint(so&63)
		w := src[i] >> s
		if s+uint(k) > 64 {
			w |= src[i+1] << (64 - s)
		}
		mask := ^uint64(0)
		if k < 64 {
			mask = 1<<uint(k) - 1
		}
		w &= mask
		i, s = do>>6, uint(do&63)
		dst[i] = dst[i]&^(mask<<s) | w<<s
		if s+uint(k) > 64 {
			dst[i+1] = dst[i+1]&^(mask>>(64-s)) | w>>(64-s)
		}
		so, do, n = so+k, do+k, n-k
	}
}

// Dropout returns x with each entry zeroed with probability p during
// training (survivors scaled by 1/(1−p)); identity in evaluation.
func (m *Model) Dropout(x *G.Node, p float64) *G.Node {
	if p <= 0 {
		return x
	}
	return m.addDropout(x, &dropout{p: p, n: x.Shape().TotalSize()})
}

// addDropout registers d (its p, n and rows set) with the model and
// returns its op over x.
func (m *Model) addDropout(x *G.Node, d *dropout) *G.Node {
	m.register(d)
	return G.Must(G.ApplyOp(maskOp{labelled{label: fmt.Sprintf("Dropout%d(p=%v)", d.id, d.p), arity: 1}, d}, x))
}

// register adds d (its p, n and rows set) to the model's masks and returns
// it. Its bits have room for the masked gathers (vec.MaskWords).
func (m *Model) register(d *dropout) *dropout {
	d.id, d.rng, d.onTrainPath = len(m.modal), m.maskRNG(), true
	d.bits = make([]uint64, vec.MaskWords(d.n))
	// the identity until the first training run draws a mask: building a
	// path (an evaluation path added later) consumes nothing from the stream
	d.ones = true
	m.modal = append(m.modal, d)
	return d
}

// DropoutRows is Dropout on the rows of a larger matrix that x holds:
// row r of x is row rows[r] of a (total, x's width) matrix, and takes
// that row of a mask drawn for the whole matrix, so x's entries are
// dropped exactly as Dropout on the whole matrix drops them there, and
// the model's stream advances as it does. A path that computes only the
// rows something reads (the rows a loss reaches) keeps the full path's
// bits. rows must be distinct and in [0, total); they are copied.
// Distinct rows matter beyond the bits: two batch rows sharing one mask
// row would tie two examples' masks by their positions, which a removed
// example shifts (the tenth outside audit of issue 38: ‖Δ‖ up to 4·C for
// a declared C on a DP-SGD path), so repeated rows panic.
func (m *Model) DropoutRows(x *G.Node, p float64, rows []int, total int) *G.Node {
	if p <= 0 {
		return x
	}
	s := x.Shape()
	if len(s) != 2 || s[0] != len(rows) {
		panic(fmt.Sprintf("nn: DropoutRows of %v over %d rows", s, len(rows))) // programming error
	}
	rows = slices.Clone(rows)
	seen := make(map[int]bool, len(rows))
	for _, r := range rows {
		if r < 0 || r >= total {
			panic(fmt.Sprintf("nn: DropoutRows: row %d of %d", r, total))
		}
		if seen[r] {
			panic(fmt.Sprintf("nn: DropoutRows: row %d twice (rows must be distinct: two rows would share one mask row)", r))
		}
		seen[r] = true
	}
	return m.addDropout(x, &dropout{p: p, n: total * s[1], rows: rows, width: s[1], sel: make([]uint64, (len(rows)*s[1]+63)/64)})
}

// maskOp multiplies its input by a dropout mask (the identity when the mask
// is off). Its gradient is the same product applied to the output
// gradient.
type maskOp struct {
	labelled
	d *dropout
}

func (maskOp) DiffWRT(int) []bool { return []bool{true} }

func (op maskOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op maskOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(op.rows(prealloc, vals))
}

func (maskOp) rowInputs() []bool { return []bool{true} }

// rows: entry j of the input keeps bit j of the mask, so a row's entries
// keep the same bits whatever range it is computed in.
func (op maskOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, err := denseF64(vals[0], op.label)
	if err != nil {
		return nil, 0, nil, err
	}
	_, d := shape2(x)
	rows := op.d.rows
	if rows == nil && len(xd) != op.d.n || rows != nil && (d != op.d.width || len(xd) != len(rows)*d) {
		return nil, 0, nil, fmt.Errorf("nn: %s of %v: the mask has %d entries", op.label, x.Shape(), op.d.n)
	}
	t, out := output(prealloc, x.Shape()...)
	if op.d.ones {
		return t, 0, func(lo, hi int) { copy(out[lo*d:hi*d], xd[lo*d:hi*d]) }, nil
	}
	bits, keep := op.d.bits, 1/(1-op.d.p)
	if rows != nil {
		bits = op.d.sel
	}
	return t, len(out), func(lo, hi int) {
		vec.MulBits(out[lo*d:hi*d], xd[lo*d:hi*d], bits, lo*d, keep)
	}, nil
}

func (op maskOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(maskOp{labelled{label: fmt.Sprintf("DropoutGrad%d", op.d.id), arity: 1}, op.d}, grad))
}

// sparseDropout applies dropout to the stored entries of a constant sparse
// matrix: in training the matrix is replaced by a copy holding only the
// kept entries, scaled by 1/(1−p), so products skip the dropped ones; in
// evaluation the matrix as set is restored. The matrix as set is never
// written.
type sparseDropout struct {
	s     *Sparse
	clean *graphs.CSR // the matrix as set (the last Set, a batch refill)
	kept  graphs.CSR  // the kept entries, rebuilt at every training run
	mask  []uint64    // bits, one per stored entry
	p     float64
	rng   *rand.Rand
	// offTrainPath is set for inputs only evaluation machines multiply
	// (the all-nodes copy of the features): they keep their clean values,
	// and no mask is drawn for them at every training step.
	offTrainPath bool
}

func (d *sparseDropout) SetTraining(t bool) {
	if d.s.A != d.clean && d.s.A != &d.kept {
		d.clean = d.s.A // new rows were set (a batch refill)
	}
	if d.offTrainPath || !t {
		if d.s.A != d.clean {
			_ = d.s.Set(d.clean) // same shape: cannot fail
		}
		return
	}
	a := d.clean
	nnz := a.NNZ()
	d.mask = resize(d.mask, (nnz+63)/64)
	fillMask(d.mask, nnz, d.p, d.rng.Uint64())
	keep := 1 / (1 - d.p)
	k := &d.kept
	if cap(k.Indices) < nnz {
		// room for every entry, so no step reallocates (kept ≤ nnz)
		k.Indices, k.Data = make([]int, 0, nnz), make([]float64, 0, nnz)
		d.s.reserve(nnz)
	}
	k.Rows, k.Cols = a.Rows, a.Cols
	k.Indptr = resize(k.Indptr, a.Rows+1)
	// every entry is written and the next write advances past it only if
	// it is kept: no branch on the mask (at p = ½ one in two mispredicts)
	idx, val := k.Indices[:nnz], k.Data[:nnz]
	pos := 0
	for i := 0; i < a.Rows; i++ {
		for q := a.Indptr[i]; q < a.Indptr[i+1]; q++ {
			idx[pos] = a.Indices[q]
			val[pos] = a.Value(q) * keep
			pos += int(d.mask[q>>6] >> (q & 63) & 1)
		}
		k.Indptr[i+1] = pos
	}
	k.Indices, k.Data = idx[:pos], val[:pos]
	_ = d.s.Set(k)
}

// SparseDropout applies dropout to the stored entries of s (bag-of-words
// input features) in training mode. Rows set later with s.Set (a batch
// refill) are picked up at the next mode switch, so call Set before Step.
func (m *Model) SparseDropout(s *Sparse, p float64) {
	if p <= 0 {
		return
	}
	d := &sparseDropout{s: s, clean: s.A, p: p, rng: m.maskRNG()}
	m.modal = append(m.modal, d)
}
