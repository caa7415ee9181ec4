package trainers

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/graphs"
)

// SSI is the structural similarity index that ASGL reports for node
// clustering (ASGL appendix, Table 7; the excerpt does not define it, the
// authors' code does):
//
//	s+ = mean cosine similarity cos(e_u, e_v) over the edges (u, v) of sign +1
//	s− = the same over the edges of sign −1
//	SSI = 1 / (|s+ − 1| + |s− + 1|)
//
// emb is a row-major n×k embedding matrix; edges is an n×n CSR whose stored
// values give the signs (> 0 positive, < 0 negative; a nil Data means all
// positive), e.g. Graph.EdgeTest. Every stored entry counts once, in the
// direction stored. The cosine of a zero vector with anything is 0 (as
// scikit-learn's cosine_similarity has it). SSI lies in [1/4, +Inf]: 1/2
// for cosines around 0, +Inf when every positive pair is aligned and every
// negative pair opposed. It fails on a shape mismatch, a non-finite
// embedding, a zero-valued edge, or when either sign has no edge.
func SSI(emb []float64, k int, edges *graphs.CSR) (float64, error) {
	if k < 1 {
		return 0, fmt.Errorf("SSI: embedding dimension %d, want ≥ 1", k)
	}
	if edges == nil {
		return 0, fmt.Errorf("SSI: no edges")
	}
	if len(emb)%k != 0 {
		return 0, fmt.Errorf("SSI: %d embedding values is not a multiple of the dimension %d", len(emb), k)
	}
	n := len(emb) / k
	if edges.Rows != n || edges.Cols != n {
		return 0, fmt.Errorf("SSI: edges are %d×%d, want %d×%d (one row per embedding)", edges.Rows, edges.Cols, n, n)
	}
	if err := edges.Validate(); err != nil {
		return 0, fmt.Errorf("SSI: edges: %w", err)
	}
	for i, v := range emb {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("SSI: embedding of node %d, entry %d is %v", i/k, i%k, v)
		}
	}
	norms := make([]float64, n)
	for u := range norms {
		norms[u] = math.Sqrt(ssiDot(emb[u*k:(u+1)*k], emb[u*k:(u+1)*k]))
	}
	var sum [2]float64
	var cnt [2]int
	for u := 0; u < n; u++ {
		for p := edges.Indptr[u]; p < edges.Indptr[u+1]; p++ {
			v, s := edges.Indices[p], edges.Value(p)
			var c float64
			if norms[u] > 0 && norms[v] > 0 {
				c = ssiDot(emb[u*k:(u+1)*k], emb[v*k:(v+1)*k]) / (norms[u] * norms[v])
			}
			switch {
			case s > 0:
				sum[0] += c
				cnt[0]++
			case s < 0:
				sum[1] += c
				cnt[1]++
			default:
				return 0, fmt.Errorf("SSI: edge (%d, %d) has sign 0", u, v)
			}
		}
	}
	if cnt[0] == 0 || cnt[1] == 0 {
		return 0, fmt.Errorf("SSI: %d positive and %d negative edges, want at least one of each", cnt[0], cnt[1])
	}
	sPos, sNeg := sum[0]/float64(cnt[0]), sum[1]/float64(cnt[1])
	return 1 / (math.Abs(sPos-1) + math.Abs(sNeg+1)), nil
}

func ssiDot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// MacroF1 is the macro-averaged F1 of single-label predictions on idx: the
// unweighted mean, over the classes that occur among the labels or the
// predictions of idx, of each class's F1 = 2TP/(2TP + FP + FN) (scikit-
// learn's f1_score(average='macro'); a class's F1 is 0 when its
// denominator is). ASGL reports it for edge-sign prediction. NaN for an
// empty index list.
func MacroF1(pred, labels, idx []int) float64 {
	if len(idx) == 0 {
		return math.NaN()
	}
	var classes []int
	for _, i := range idx {
		classes = append(classes, labels[i], pred[i])
	}
	slices.Sort(classes)
	classes = slices.Compact(classes)
	sum := 0.0
	for _, c := range classes {
		sum += BinaryF1(pred, labels, idx, c)
	}
	return sum / float64(len(classes))
}

// BinaryF1 is the F1 score of class positive on idx, 2TP/(2TP + FP + FN),
// treating every other class as negative (scikit-learn's
// f1_score(average='binary', pos_label=positive)); 0 when no index has
// positive as label or prediction. NaN for an empty index list.
func BinaryF1(pred, labels, idx []int, positive int) float64 {
	if len(idx) == 0 {
		return math.NaN()
	}
	tp, fp, fn := 0, 0, 0
	for _, i := range idx {
		p, l := pred[i] == positive, labels[i] == positive
		switch {
		case p && l:
			tp++
		case p:
			fp++
		case l:
			fn++
		}
	}
	if d := 2*tp + fp + fn; d > 0 {
		return 2 * float64(tp) / float64(d)
	}
	return 0
}
