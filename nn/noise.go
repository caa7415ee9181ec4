package nn

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NormalSource draws standard normal variates (dp.Source implements it).
type NormalSource interface{ Normal() float64 }

// blockFiller is a NormalSource that fills a whole vector at once, in
// blocks (in parallel, for dp.Source), calling then on each filled block.
type blockFiller interface {
	FillNormalBlocks(dst []float64, then func(lo, hi int))
}

// Releaser records one release of a mechanism in its run's privacy
// ledger. *dp.Recorder implements it (nn does not import dp): a mechanism
// is constructed with the recorder of its planned release and calls
// Record once per release it makes.
type Releaser interface{ Record() }

// Noise is the state of a Gaussian noise node: its standard deviation (the
// noise multiplier times the sensitivity) and its source. Std may be
// changed between runs (0 disables the noise, e.g. for all but the last
// chunk of an oversized DP-SGD batch). Last holds the noise vector drawn by
// the most recent run (for traces and tests).
type Noise struct {
	Name string
	Std  float64
	Src  NormalSource
	Last []float64
	// Draws counts the runs that added noise.
	Draws int
	// Rec, if set, records every run that added noise (a release) in the
	// run's privacy ledger: a *dp.Recorder built from the run's plan, or
	// a mechanism's own Releaser around one.
	Rec Releaser

	// PrefetchNoise: pending while pre is being filled with the next
	// run's draws; done receives once they are (made once, reused).
	pending bool
	done    chan struct{}
	pre     []float64
	// finish adds the drawn noise to x into out (the op's run sets them):
	// made once, so that a run allocates no closure.
	finish func(lo, hi int)
	x, out []float64
	div    float64
}

// wait waits for draws PrefetchNoise started, if any.
func (n *Noise) wait() {
	if n.pending {
		<-n.done
		n.pending = false
	}
}

// PrefetchNoise draws, on one background goroutine, the standard normal
// vectors the next noise-adding run of each of ns will use (sizes[i]
// entries for ns[i]), in the order given, exactly as the runs would draw
// them from their sources: the drawing then overlaps whatever the graph
// computes before its noise nodes (DP-SGD's forward and backward passes).
// Until those runs have consumed the draws, or WaitNoise returns, nothing
// else may read the sources.
func PrefetchNoise(ns []*Noise, sizes []int) {
	for i, n := range ns {
		if n.done == nil {
			n.done = make(chan struct{}, 1)
		}
		n.pending = true
		if cap(n.pre) < sizes[i] {
			n.pre = make([]float64, sizes[i])
		}
		n.pre = n.pre[:sizes[i]]
	}
	go drawAhead(ns)
}

// drawAhead fills each noise's pre in turn and signals it.
func drawAhead(ns []*Noise) {
	for _, n := range ns {
		drawNormal(n.Src, n.pre)
		n.done <- struct{}{}
	}
}

// WaitNoise waits for draws of ns that PrefetchNoise started and no run
// consumed (a failed run), and drops them.
func WaitNoise(ns []*Noise) {
	for _, n := range ns {
		n.wait()
	}
}

// drawNormal fills dst with standard normal draws from src: in parallel
// blocks where src can (dp.Source), one by one otherwise.
func drawNormal(src NormalSource, dst []float64) {
	if f, ok := src.(blockFiller); ok {
		f.FillNormalBlocks(dst, nil)
		return
	}
	for i := range dst {
		dst[i] = src.Normal()
	}
}

// gaussianNoiseOp returns (x + N(0, Std²))/div elementwise, fresh noise
// each run. Its gradient is the identity divided by div.
type gaussianNoiseOp struct {
	pure
	n   *Noise
	div float64
}

// AddNoise returns the node x + N(0, n.Std²·I): the noise node that makes a
// release private (NAP aggregates).
func AddNoise(x *G.Node, n *Noise) (*G.Node, error) {
	return G.ApplyOp(gaussianNoiseOp{n: n, div: 1}, x)
}

// AddNoiseDiv returns the node (x + N(0, n.Std²·I))/div, bit for bit the
// same as dividing AddNoise's node by div, in one pass: DP-SGD's noisy mean
// of the clipped gradient sum over the expected batch size div.
func AddNoiseDiv(x *G.Node, n *Noise, div float64) (*G.Node, error) {
	if !(div > 0) || math.IsInf(div, 0) {
		return nil, fmt.Errorf("nn: noise %s divided by %g; want a positive finite divisor", n.Name, div)
	}
	return G.ApplyOp(gaussianNoiseOp{n: n, div: div}, x)
}

func (op gaussianNoiseOp) Arity() int       { return 1 }
func (op gaussianNoiseOp) Type() hm.Type    { a := hm.TypeVariable('a'); return hm.NewFnType(a, a) }
func (op gaussianNoiseOp) Hashcode() uint32 { return hash32(op.WriteHash) }
func (op gaussianNoiseOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "GaussianNoise(%s,%p)/%v", op.n.Name, op.n, op.div)
}
func (op gaussianNoiseOp) String() string {
	if op.div != 1 {
		return fmt.Sprintf("GaussianNoise(%s, std=%.4g)/%.4g", op.n.Name, op.n.Std, op.div)
	}
	return fmt.Sprintf("GaussianNoise(%s, std=%.4g)", op.n.Name, op.n.Std)
}
func (op gaussianNoiseOp) DiffWRT(int) []bool { return []bool{true} }
func (op gaussianNoiseOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (op gaussianNoiseOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op gaussianNoiseOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "GaussianNoise")
	if err != nil {
		return nil, err
	}
	t, out := output(prealloc, x.Shape()...)
	if cap(op.n.Last) < len(xd) {
		op.n.Last = make([]float64, len(xd))
	}
	op.n.Last = op.n.Last[:len(xd)]
	n := op.n
	last, div := n.Last, op.div
	if n.Std > 0 {
		if n.Src == nil {
			return nil, fmt.Errorf("nn: noise node %s has no source", n.Name)
		}
		// e = std·z, then (x + e)/div: the same operations as AddNoise
		// followed by a division, so the same bits ((x + e)/1 is x + e exactly).
		if n.finish == nil {
			n.finish = func(lo, hi int) {
				vec.ScaleAddDiv(n.Last[lo:hi], n.x[lo:hi], n.out[lo:hi], n.Std, n.div)
			}
		}
		n.x, n.out, n.div = xd, out, div
		defer func() { n.x, n.out = nil, nil }()
		finish := n.finish
		switch f, ok := n.Src.(blockFiller); {
		case n.pending: // drawn by PrefetchNoise
			n.wait()
			if len(n.pre) != len(last) {
				return nil, fmt.Errorf("nn: noise %s: %d draws prefetched for %d entries", n.Name, len(n.pre), len(last))
			}
			n.Last, n.pre = n.pre, n.Last
			last = n.Last
			parallel.Rows(len(last), len(last), finish)
		case ok:
			f.FillNormalBlocks(last, finish)
		default:
			drawNormal(op.n.Src, last)
			finish(0, len(last))
		}
		op.n.Draws++
		if op.n.Rec != nil {
			op.n.Rec.Record()
		}
	} else {
		clear(last)
		copy(out, xd)
		if div != 1 {
			for i := range out {
				out[i] /= div
			}
		}
	}
	return t, nil
}
func (op gaussianNoiseOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if op.div != 1 {
		d, err := G.Div(grad, G.NewConstant(op.div))
		return G.Nodes{d}, err
	}
	return G.Nodes{grad}, nil
}
