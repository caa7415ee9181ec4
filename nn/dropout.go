package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
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

// fillMask sets every entry of buf to 0 (dropped, probability p) or keep,
// from the stream seeded by seed, in parallel over blocks.
func fillMask(buf []float64, p, keep float64, seed uint64) {
	w, t := dropLanes(p)
	lanes := 64 / int(w)
	lane := uint64(1)<<w - 1
	// (x − t) >> 63 is 1 exactly when the lane x < t (both below 2³²).
	val := [2]float64{keep, 0}
	n := len(buf)
	blocks := (n + maskBlock - 1) / maskBlock
	parallel.Rows(blocks, n, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			rng := rand.NewPCG(seed, uint64(b))
			blk := buf[b*maskBlock : min((b+1)*maskBlock, n)]
			for i := 0; i < len(blk); {
				u := rng.Uint64()
				for l := 0; l < lanes && i < len(blk); l++ {
					blk[i] = val[((u&lane)-t)>>63]
					u >>= w
					i++
				}
			}
		}
	})
}

// dropout holds a mask of Bernoulli(1−p)/(1−p) draws, redrawn for every
// training run, that its op (maskOp) multiplies into its input; in
// evaluation the op passes its input through.
type dropout struct {
	id  int
	p   float64
	rng *rand.Rand
	buf []float64
	// onTrainPath is false for masks the training machine never runs (an
	// evaluation path over all nodes): they are never drawn.
	onTrainPath bool
	ones        bool // evaluation: the op is the identity
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
		fillMask(d.buf, d.p, 1/(1-d.p), d.rng.Uint64())
	}
}

// Dropout returns x with each entry zeroed with probability p during
// training (survivors scaled by 1/(1−p)); identity in evaluation.
func (m *Model) Dropout(x *G.Node, p float64) *G.Node {
	if p <= 0 {
		return x
	}
	d := &dropout{id: len(m.modal), p: p, rng: m.rng, buf: make([]float64, x.Shape().TotalSize()), onTrainPath: true}
	// the identity until the first training run draws a mask: building a
	// path (an evaluation path added later) consumes nothing from the stream
	d.ones = true
	m.modal = append(m.modal, d)
	return G.Must(G.ApplyOp(maskOp{labelled{label: fmt.Sprintf("Dropout%d(p=%v)", d.id, p), arity: 1}, d}, x))
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
	x, xd, err := denseF64(vals[0], op.label)
	if err != nil {
		return nil, err
	}
	if len(xd) != len(op.d.buf) {
		return nil, fmt.Errorf("nn: %s of %v: the mask has %d entries", op.label, x.Shape(), len(op.d.buf))
	}
	t, out := output(prealloc, x.Shape()...)
	if op.d.ones {
		copy(out, xd)
		return t, nil
	}
	mask := op.d.buf
	parallel.Rows(len(out), len(out), func(lo, hi int) {
		vec.Mul(out[lo:hi], xd[lo:hi], mask[lo:hi])
	})
	return t, nil
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
	mask  []float64
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
	d.mask = resize(d.mask, nnz)
	fillMask(d.mask, d.p, 1/(1-d.p), d.rng.Uint64())
	k := &d.kept
	if cap(k.Indices) < nnz {
		// room for every entry, so no step reallocates (kept ≤ nnz)
		k.Indices, k.Data = make([]int, 0, nnz), make([]float64, 0, nnz)
		d.s.reserve(nnz)
	}
	k.Rows, k.Cols = a.Rows, a.Cols
	k.Indptr = resize(k.Indptr, a.Rows+1)
	k.Indices, k.Data = k.Indices[:0], k.Data[:0]
	for i := 0; i < a.Rows; i++ {
		for q := a.Indptr[i]; q < a.Indptr[i+1]; q++ {
			if f := d.mask[q]; f != 0 {
				k.Indices = append(k.Indices, a.Indices[q])
				k.Data = append(k.Data, a.Value(q)*f)
			}
		}
		k.Indptr[i+1] = len(k.Indices)
	}
	_ = d.s.Set(k)
}

// SparseDropout applies dropout to the stored entries of s (bag-of-words
// input features) in training mode. Rows set later with s.Set (a batch
// refill) are picked up at the next mode switch, so call Set before Step.
func (m *Model) SparseDropout(s *Sparse, p float64) {
	if p <= 0 {
		return
	}
	d := &sparseDropout{s: s, clean: s.A, p: p, rng: m.rng}
	m.modal = append(m.modal, d)
}
