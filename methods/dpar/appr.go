package dpar

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/internal/parallel"

	"github.com/dpgnn/dpgnn/graphs"
)

// DPAR's differentially private approximate personalised PageRank (Zhang et
// al., WWW 2024): the row mechanisms of Algorithm 1 (EM, §3.1) and
// Algorithm 3 (GM, Appendix B), their accounting in the paper's form
// (Corollary 1, Theorems 1 and 3) and in a strict form, the assembly of the
// aggregation matrix Π with its column clipping (Algorithm 2, lines 2–4),
// and amplification by node subsampling (Theorem 2).
//
// Neighbouring graphs differ by one node with all its edges. The APPR
// vectors of the M sources are indexed by the N nodes; a node absent from
// one graph has entry 0 there.

// APPRKind selects the DP-APPR row mechanism.
type APPRKind int

const (
	// APPRNone keeps the K largest entries of the ISTA vector, without
	// noise (DPAR's non-private DPARNoDP; not private).
	APPRNone APPRKind = iota
	// APPREM0 is Algorithm 1 option I: one-shot Gumbel top-K on the
	// element-clipped vector, each selected entry weighted 1/K.
	APPREM0
	// APPREM1 is Algorithm 1 option II: the same selection, each selected
	// entry reported as its clipped value plus Laplace noise.
	APPREM1
	// APPRGM is Algorithm 3: Gaussian noise on every entry of the
	// ℓ2-clipped vector, then the K largest noisy entries.
	APPRGM
)

var apprKindNames = []string{"none", "em0", "em1", "gm"}

// String returns "none", "em0", "em1" or "gm".
func (k APPRKind) String() string {
	if k < 0 || int(k) >= len(apprKindNames) {
		return fmt.Sprintf("APPRKind(%d)", int(k))
	}
	return apprKindNames[k]
}

// ParseAPPRKind parses "none", "em0", "em1" or "gm" (case-insensitive).
func ParseAPPRKind(s string) (APPRKind, error) {
	if i := slices.Index(apprKindNames, strings.ToLower(s)); i >= 0 {
		return APPRKind(i), nil
	}
	return 0, fmt.Errorf("dpar: unknown DP-APPR mechanism %q (want one of %s)", s, strings.Join(apprKindNames, ", "))
}

// APPRAccounting selects how the DP-APPR stage is accounted.
type APPRAccounting int

const (
	// APPRPaper is DPAR's own accounting: Corollary 1 per EM row, the
	// classical Gaussian bound with sensitivity C1 per GM row, and the
	// simplified composition of Kairouz et al. over the M rows
	// (Theorems 1 and 3). It reproduces the paper's numbers but is not a
	// sound guarantee everywhere: the classical Gaussian bound needs a
	// per-row ε < 1, the GM sensitivity is √2·C1, not C1, and the
	// simplified composition over-claims at large ε (APPRCost.Warnings
	// says when).
	APPRPaper APPRAccounting = iota
	// APPRStrict accounts the rows as events: GM rows as Gaussian
	// mechanisms with sensitivity √2·C1 (exact GDP accountant), EM rows as
	// K ε₀-DP exponential-mechanism rounds plus, for option II, one
	// Laplace release each (RDP accountant).
	APPRStrict
)

var apprAccountingNames = []string{"paper", "strict"}

// String returns "paper" or "strict".
func (a APPRAccounting) String() string {
	if a < 0 || int(a) >= len(apprAccountingNames) {
		return fmt.Sprintf("APPRAccounting(%d)", int(a))
	}
	return apprAccountingNames[a]
}

// ParseAPPRAccounting parses "paper" or "strict" (case-insensitive).
func ParseAPPRAccounting(s string) (APPRAccounting, error) {
	if i := slices.Index(apprAccountingNames, strings.ToLower(s)); i >= 0 {
		return APPRAccounting(i), nil
	}
	return 0, fmt.Errorf("dpar: unknown DP-APPR accounting %q (want paper or strict)", s)
}

// APPRMechanism is one DP-APPR row mechanism with its noise. Clip is C2
// (element-wise clip, EM) or C1 (ℓ2 clip, GM). Scales follow the paper's
// convention: the Gumbel scale is β = C2/ε for the paper's ε (DPAR Alg. 1
// line 8), i.e. a per-round exponential-mechanism ε₀ = 2·C2/β.
type APPRMechanism struct {
	Kind         APPRKind
	K            int     // entries kept per row, 1 ≤ K ≤ N
	Clip         float64 // C2 (EM0, EM1) or C1 (GM) > 0; unused by APPRNone
	GumbelScale  float64 // β > 0 (EM0, EM1)
	LaplaceScale float64 // b > 0 (EM1)
	GaussianStd  float64 // σ_GM > 0 (GM)
}

// Validate reports whether m is usable, naming the bad parameter.
func (m APPRMechanism) Validate() error {
	if m.Kind < APPRNone || m.Kind > APPRGM {
		return fmt.Errorf("dpar: unknown DP-APPR mechanism %d", int(m.Kind))
	}
	if err := dp.CheckCount("DP-APPR top-K size K", m.K); err != nil {
		return err
	}
	if m.Kind == APPRNone {
		return nil
	}
	if err := dp.CheckPositiveFinite("DP-APPR clip bound", m.Clip); err != nil {
		return err
	}
	switch m.Kind {
	case APPRGM:
		return dp.CheckPositiveFinite("DP-APPR Gaussian std", m.GaussianStd)
	case APPREM1:
		if err := dp.CheckPositiveFinite("DP-APPR Laplace scale", m.LaplaceScale); err != nil {
			return err
		}
	}
	return dp.CheckPositiveFinite("DP-APPR Gumbel scale", m.GumbelScale)
}

// GumbelEpsilon returns the paper's Gumbel ε = C2/β of an EM mechanism
// (DPAR Alg. 1 line 8; the per-round exponential mechanism is 2ε-DP).
func (m APPRMechanism) GumbelEpsilon() float64 { return m.Clip / m.GumbelScale }

// Release applies the row mechanism to one APPR vector p (dense, length N,
// non-negative, as ISTA returns it) and returns the released sparse row.
// Every one of the N coordinates gets noise and is a candidate, including
// those ISTA never reached (restricting the candidates would break DP). p
// is not modified. A DP kind returns exactly K entries; APPRNone returns the
// K largest positive entries (fewer if p has fewer) and src may be nil.
//
// Sensitivity, for one row with a fixed source, between neighbouring graphs
// (entries of a node missing from one graph are 0 there; the row of a
// removed source is compared with the zero vector):
//
//   - EM0/EM1 (DPAR Alg. 1, Theorem 1): p̂_j = min(p_j, C2) ∈ [0, C2] on both
//     graphs, so each utility changes by at most C2, however many change.
//     Gumbel(β) noise on every utility and the K largest (one shot) has the
//     law of K rounds of the exponential mechanism exp(u/β) without
//     replacement (Durfee & Rogers 2019), each round ε₀ = 2·C2/β-DP
//     (GumbelTopK). Option II reports the K clipped values p̂_j (not the
//     noisy scores) plus Laplace(b): K values each moving by ≤ C2, so L1
//     sensitivity K·C2 and (K·C2/b)-DP. Option I's 1/K weights are
//     post-processing of the selection.
//   - GM (DPAR Alg. 3, Theorem 3): p̂ = p/max(1, ‖p‖₂/C1), so p̂, p̂' ≥ 0 and
//     ‖p̂‖₂, ‖p̂'‖₂ ≤ C1, hence ‖p̂ − p̂'‖₂² = ‖p̂‖² + ‖p̂'‖² − 2⟨p̂, p̂'⟩ ≤ 2C1²:
//     L2 sensitivity √2·C1 (the paper uses C1, which C1·(1, 0) versus
//     C1·(0.4, 0.9165) exceeds). Keeping the K largest noisy values is
//     post-processing.
//
// One node can change all M rows; Cost composes them.
func (m APPRMechanism) Release(p []float64, src *dp.Source) (SparseVec, error) {
	if err := m.Validate(); err != nil {
		return SparseVec{}, err
	}
	if m.K > len(p) {
		return SparseVec{}, fmt.Errorf("dpar: DP-APPR top-K size K=%d exceeds the N=%d candidates", m.K, len(p))
	}
	for j, v := range p {
		if !(v >= 0) || math.IsInf(v, 1) {
			return SparseVec{}, fmt.Errorf("dpar: APPR value p[%d] = %g, want a non-negative finite number", j, v)
		}
	}
	if m.Kind == APPRNone {
		return topPositive(p, m.K), nil
	}
	if src == nil {
		return SparseVec{}, errNilSource
	}
	var idx []int
	var vals []float64
	switch m.Kind {
	case APPREM0, APPREM1:
		u := clipElements(p, m.Clip)
		sel, err := dp.GumbelTopK(u, m.K, m.GumbelScale, src)
		if err != nil {
			return SparseVec{}, err
		}
		idx, vals = sel, make([]float64, m.K)
		lap := dp.Laplace{Scale: m.LaplaceScale}
		for i, j := range sel {
			if m.Kind == APPREM0 {
				vals[i] = 1 / float64(m.K)
			} else {
				vals[i] = u[j] + lap.Draw(src)
			}
		}
	case APPRGM:
		x := clipL2(p, m.Clip)
		if err := (dp.Gaussian{Multiplier: 1, Sensitivity: m.GaussianStd}).AddNoise(x, src); err != nil {
			return SparseVec{}, err
		}
		sel, err := dp.GumbelTopK(x, m.K, 0, src) // exact top-K, no draws
		if err != nil {
			return SparseVec{}, err
		}
		idx, vals = sel, make([]float64, m.K)
		for i, j := range sel {
			vals[i] = x[j]
		}
	}
	return sortedSparse(len(p), idx, vals), nil
}

// clipElements returns min(p_j, c) for every j (DPAR Alg. 1 line 6).
func clipElements(p []float64, c float64) []float64 {
	u := make([]float64, len(p))
	for j, v := range p {
		u[j] = math.Min(v, c)
	}
	return u
}

// clipL2 returns p/max(1, ‖p‖₂/c) (DPAR Alg. 3 line 4).
func clipL2(p []float64, c float64) []float64 {
	var ss float64
	for _, v := range p {
		ss += v * v
	}
	f := 1 / math.Max(1, math.Sqrt(ss)/c)
	x := make([]float64, len(p))
	for j, v := range p {
		x[j] = f * v
	}
	return x
}

// topPositive returns the k largest positive entries of p (ties: lower
// index first), as DPAR's code does without DP.
func topPositive(p []float64, k int) SparseVec {
	var idx []int
	for j, v := range p {
		if v > 0 {
			idx = append(idx, j)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[b], p[a]) })
	idx = idx[:min(k, len(idx))]
	vals := make([]float64, len(idx))
	for i, j := range idx {
		vals[i] = p[j]
	}
	return sortedSparse(len(p), idx, vals)
}

// sortedSparse builds a SparseVec from distinct indices, sorting by index.
func sortedSparse(n int, idx []int, vals []float64) SparseVec {
	order := make([]int, len(idx))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(idx[a], idx[b]) })
	v := SparseVec{Len: n, Indices: make([]int, len(idx)), Values: make([]float64, len(idx))}
	for i, o := range order {
		v.Indices[i], v.Values[i] = idx[o], vals[o]
	}
	return v
}

// APPRMatrix releases DPAR's DP-APPR rows (Alg. 1 and Alg. 3, lines 1–10)
// over the public id universe [0, n): every node id of the input, whether
// or not the node is present. sub is the graph of the node subsample G in
// local ids, and ids[k] (sorted, distinct, in [0, n)) the universe id of its
// local node k. For each source — a universe id chosen without looking at
// the data — the APPR vector is ISTA's vector of the source on sub,
// scattered to universe ids, when the source is a node of G, and the zero
// vector when it is not (an absent node's APPR vector is 0); it is released
// through m over all n coordinates, so every id, an absent node's included,
// is a candidate of the top-K with value 0 plus noise. Row i of the
// len(sources)×n result is the row of sources[i], in universe ids. Each row
// draws from its own child of src (Split in row order, before the rows run
// in parallel), so the result depends on the seed only. src may be nil only
// for APPRNone.
//
// Privacy: removing a node v from the input (or from G) changes the vector
// of every source by at most the sensitivity of m's clipped vector (see
// Release: both vectors are non-negative, clipped and indexed by the same
// n ids, v's coordinate included; a source that is v itself goes from its
// clipped vector to 0, within the same bound), so the rows compose as m's
// events over len(sources) rows (Events). The set of sources and of
// candidates does not depend on the data.
func APPRMatrix(sub *graphs.CSR, ids []int, n int, sources []int, params ISTAParams, m APPRMechanism, src *dp.Source) (*graphs.CSR, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if src == nil && m.Kind != APPRNone {
		return nil, errNilSource
	}
	if err := checkSources(sources, n); err != nil {
		return nil, err
	}
	if err := checkSources(ids, n); err != nil {
		return nil, fmt.Errorf("dpar: G's node ids: %w", err)
	}
	var solver *ISTA
	if len(ids) > 0 {
		var err error
		if solver, err = NewISTA(sub, params); err != nil {
			return nil, err
		}
		if solver.N() != len(ids) {
			return nil, fmt.Errorf("dpar: G has %d nodes but %d ids", solver.N(), len(ids))
		}
	}
	kids := make([]*dp.Source, len(sources))
	if src != nil {
		for i := range kids {
			kids[i] = src.Split("dpar/appr row")
		}
	}
	rows := make([]SparseVec, len(sources))
	errs := make([]error, len(sources))
	parallel.Rows(len(sources), len(sources)*n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p, err := apprVector(solver, ids, n, sources[i])
			if err != nil {
				errs[i] = err
				continue
			}
			rows[i], errs[i] = m.Release(p, kids[i])
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := &graphs.CSR{Rows: len(sources), Cols: n, Indptr: make([]int, 1, len(sources)+1)}
	for _, r := range rows {
		out.Indices = append(out.Indices, r.Indices...)
		out.Data = append(out.Data, r.Values...)
		out.Indptr = append(out.Indptr, len(out.Indices))
	}
	if out.Data == nil {
		out.Data = []float64{}
	}
	return out, nil
}

// apprVector is the APPR vector of the universe id s over [0, n): ISTA's
// vector on G (solver, local ids; ids maps them to universe ids) when s is
// a node of G, else the zero vector.
func apprVector(solver *ISTA, ids []int, n, s int) ([]float64, error) {
	out := make([]float64, n)
	local, ok := slices.BinarySearch(ids, s)
	if !ok {
		return out, nil
	}
	p, _, err := solver.Solve(local)
	if err != nil {
		return nil, err
	}
	for k, j := range p.Indices {
		out[ids[j]] = p.Values[k]
	}
	return out, nil
}

// checkSources requires distinct node ids in [0, n).
func checkSources(sources []int, n int) error {
	seen := make(map[int]bool, len(sources))
	for i, s := range sources {
		if s < 0 || s >= n {
			return fmt.Errorf("dpar: DP-APPR source %d (position %d) is out of range [0, %d)", s, i, n)
		}
		if seen[s] {
			return fmt.Errorf("dpar: DP-APPR source %d appears twice", s)
		}
		seen[s] = true
	}
	return nil
}

// AssemblePi extends the M×N DP-APPR matrix to DPAR's N×N aggregation
// matrix, as the authors' code does (Alg. 2 takes Π ∈ R^{M×N}; the code
// makes every training node an example): row sources[i] is row i of appr,
// every other row v is the one-hot identity row e_v (node v aggregates only
// itself). The identity rows do not depend on the graph's edges, so Π is as
// private as appr. Sources must be distinct and len(sources) = appr.Rows.
func AssemblePi(appr *graphs.CSR, sources []int) (*graphs.CSR, error) {
	if appr == nil {
		return nil, errors.New("dpar: AssemblePi needs the DP-APPR matrix, got nil")
	}
	if err := appr.Validate(); err != nil {
		return nil, fmt.Errorf("dpar: DP-APPR matrix: %w", err)
	}
	if appr.Rows != len(sources) {
		return nil, fmt.Errorf("dpar: DP-APPR matrix has %d rows but %d sources", appr.Rows, len(sources))
	}
	n := appr.Cols
	if err := checkSources(sources, n); err != nil {
		return nil, err
	}
	rowOf := make([]int, n)
	for i := range rowOf {
		rowOf[i] = -1
	}
	for i, s := range sources {
		rowOf[s] = i
	}
	pi := &graphs.CSR{Rows: n, Cols: n, Indptr: make([]int, 1, n+1), Data: []float64{}}
	for v := 0; v < n; v++ {
		if i := rowOf[v]; i >= 0 {
			for k := appr.Indptr[i]; k < appr.Indptr[i+1]; k++ {
				pi.Indices = append(pi.Indices, appr.Indices[k])
				pi.Data = append(pi.Data, appr.Value(k))
			}
		} else {
			pi.Indices = append(pi.Indices, v)
			pi.Data = append(pi.Data, 1)
		}
		pi.Indptr = append(pi.Indptr, len(pi.Indices))
	}
	return pi, nil
}

// ColumnMode selects how ClipColumns bounds the columns of Π.
type ColumnMode int

const (
	// ColumnClip is the paper's Π_{:,j} / max(1, ‖Π_{:,j}‖₁/τ) (DPAR Alg. 2
	// line 3): columns within τ are unchanged.
	ColumnClip ColumnMode = iota
	// ColumnNormalize is the authors' code: every non-zero column is scaled
	// to ‖Π_{:,j}‖₁ = τ (the code's τ = 1), so small columns grow.
	ColumnNormalize
)

var columnModeNames = []string{"clip", "normalize"}

// String returns "clip" or "normalize".
func (c ColumnMode) String() string {
	if c < 0 || int(c) >= len(columnModeNames) {
		return fmt.Sprintf("ColumnMode(%d)", int(c))
	}
	return columnModeNames[c]
}

// ParseColumnMode parses "clip" or "normalize" (case-insensitive).
func ParseColumnMode(s string) (ColumnMode, error) {
	if i := slices.Index(columnModeNames, strings.ToLower(s)); i >= 0 {
		return ColumnMode(i), nil
	}
	return 0, fmt.Errorf("dpar: unknown column mode %q (want clip or normalize)", s)
}

// ClipColumns returns Π with every column's ℓ1 norm (of absolute values:
// GM and EM1 weights can be negative) at most tau, by mode (DPAR Alg. 2
// lines 2–4). Both modes leave ‖Π_{:,j}‖₁ ≤ τ, which is what DPAR's
// Theorem 2 needs: node j's features enter the examples' gradients with
// total weight at most τ. It is post-processing of the DP matrix, so it
// costs no privacy. The result is a new weighted CSR; pi is not modified.
func ClipColumns(pi *graphs.CSR, tau float64, mode ColumnMode) (*graphs.CSR, error) {
	if pi == nil {
		return nil, errors.New("dpar: ClipColumns needs a matrix, got nil")
	}
	if err := pi.Validate(); err != nil {
		return nil, fmt.Errorf("dpar: Π: %w", err)
	}
	if err := dp.CheckPositiveFinite("column clip tau", tau); err != nil {
		return nil, err
	}
	if mode != ColumnClip && mode != ColumnNormalize {
		return nil, fmt.Errorf("dpar: unknown column mode %d", int(mode))
	}
	norm := make([]float64, pi.Cols)
	for k, j := range pi.Indices {
		norm[j] += math.Abs(pi.Value(k))
	}
	for j, s := range norm {
		switch {
		case s == 0:
			norm[j] = 1
		case mode == ColumnClip:
			norm[j] = 1 / math.Max(1, s/tau)
		default:
			norm[j] = tau / s
		}
	}
	out := pi.Clone()
	out.Data = make([]float64, pi.NNZ())
	for k, j := range pi.Indices {
		out.Data[k] = pi.Value(k) * norm[j]
	}
	return out, nil
}

// ClassicalGaussianStd returns the noise std σ = sqrt(2 ln(1.25/δ))·Δ/ε of
// the classical Gaussian mechanism (Dwork & Roth 2014, Thm A.1), which DPAR
// uses per GM row (Alg. 3 line 5, Theorem 3). The bound is proven only for
// ε < 1; larger ε are computed (to reproduce the paper) but guarantee
// nothing. Prefer CalibrateGaussian.
func ClassicalGaussianStd(eps, delta, sensitivity float64) (float64, error) {
	if err := dp.CheckPositiveFinite("epsilon", eps); err != nil {
		return 0, err
	}
	if err := dp.CheckDelta(delta); err != nil {
		return 0, err
	}
	if err := dp.CheckPositiveFinite("Gaussian sensitivity", sensitivity); err != nil {
		return 0, err
	}
	return math.Sqrt(2*math.Log(1.25/delta)) * sensitivity / eps, nil
}

// ClassicalGaussianEpsilon inverts ClassicalGaussianStd: the ε that DPAR's
// code reports for a GM row with noise std (valid only when it is < 1).
func ClassicalGaussianEpsilon(std, delta, sensitivity float64) (float64, error) {
	if err := dp.CheckPositiveFinite("Gaussian std", std); err != nil {
		return 0, err
	}
	return ClassicalGaussianStd(std, delta, sensitivity)
}

// APPRCost is the privacy cost of releasing Rows DP-APPR rows, before
// amplification by node subsampling.
type APPRCost struct {
	Accounting APPRAccounting
	// Accountant names what composed the rows: "kairouz-simplified"
	// (paper), "gdp" or "rdp" (strict).
	Accountant string
	Rows       int
	// RowEpsilon and RowDelta are the per-row (ε, δ) of the paper's
	// accounting (Corollary 1 for EM0/EM1 plus ε₂ = K·C2/b for EM1; the
	// classical Gaussian bound for GM) with RowDelta = Delta/(2·Rows).
	// Zero under APPRStrict.
	RowEpsilon, RowDelta float64
	Epsilon, Delta       float64 // (ε_pr, δ_pr) of all rows
	// Warnings say where the paper's accounting does not hold at these
	// values (a per-row ε ≥ 1 in the classical Gaussian bound; a total
	// that the exact optimal composition of the per-row guarantees does
	// not support).
	Warnings []string
}

// Cost returns the (ε, δ) of releasing rows rows with m at total δ = delta
// (one node can change every row, so the rows compose).
//
// APPRPaper (DPAR Theorems 1 and 3): per-row δ_v = δ/(2·rows), per-row ε_v
// from Corollary 1 (GumbelTopKEpsilon at scale β, sensitivity C2), plus
// K·C2/b for option II, or ClassicalGaussianEpsilon(σ, δ_v, C1) for GM; the
// total ε solves h_rows(ε) = ε_v (KairouzTotalEpsilon). The simplified
// composition is a sufficient condition of Kairouz et al. for small total
// ε only; Cost compares it with the exact optimal composition of rows
// (ε_v, δ_v)-DP mechanisms (Kairouz, Oh & Viswanath 2017, Thm 3.3) and adds
// a warning when that needs a larger δ at the paper's ε (as at the code's
// defaults: per-row ε 6.48 over 70 rows is ≈ 453.8 at δ = 0.014, not 345).
//
// APPRStrict: the total ε at delta of Events(rows), with the exact GDP
// accountant for GM and the RDP accountant for EM0/EM1.
func (m APPRMechanism) Cost(rows int, delta float64, mode APPRAccounting) (APPRCost, error) {
	if err := m.Validate(); err != nil {
		return APPRCost{}, err
	}
	if m.Kind == APPRNone {
		return APPRCost{}, errors.New("dpar: DP-APPR mechanism none is not private and has no cost")
	}
	if err := dp.CheckCount("number of DP-APPR rows", rows); err != nil {
		return APPRCost{}, err
	}
	if err := dp.CheckDelta(delta); err != nil {
		return APPRCost{}, err
	}
	c := APPRCost{Accounting: mode, Rows: rows, Delta: delta}
	switch mode {
	case APPRPaper:
		return m.paperCost(c)
	case APPRStrict:
		events, err := m.Events(rows)
		if err != nil {
			return APPRCost{}, err
		}
		c.Accountant = "rdp"
		if m.Kind == APPRGM {
			c.Accountant = "gdp"
		}
		c.Epsilon, err = dp.EpsilonOf(c.Accountant, events, delta)
		return c, err
	}
	return APPRCost{}, fmt.Errorf("dpar: unknown DP-APPR accounting %d", int(mode))
}

func (m APPRMechanism) paperCost(c APPRCost) (APPRCost, error) {
	c.Accountant = "kairouz-simplified"
	c.RowDelta = c.Delta / (2 * float64(c.Rows))
	var err error
	switch m.Kind {
	case APPRGM:
		c.RowEpsilon, err = ClassicalGaussianEpsilon(m.GaussianStd, c.RowDelta, m.Clip)
		if err == nil && c.RowEpsilon >= 1 {
			c.Warnings = append(c.Warnings, fmt.Sprintf(
				"the classical Gaussian bound is used at a per-row epsilon of %.6g, but it holds only below 1", c.RowEpsilon))
		}
	default:
		c.RowEpsilon, err = dp.GumbelTopKEpsilon(m.GumbelScale, m.Clip, m.K, c.RowDelta)
		if m.Kind == APPREM1 {
			c.RowEpsilon += float64(m.K) * m.Clip / m.LaplaceScale
		}
	}
	if err != nil {
		return APPRCost{}, err
	}
	if c.Epsilon, err = KairouzTotalEpsilon(c.RowEpsilon, c.Delta, c.Rows); err != nil {
		return APPRCost{}, err
	}
	if d := optimalCompositionDelta(c.RowEpsilon, c.RowDelta, c.Rows, c.Epsilon); d > c.Delta {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"the simplified composition claims (%.6g, %.3g) for %d (%.6g, %.3g)-DP rows, but the optimal composition gives only delta %.3g at that epsilon",
			c.Epsilon, c.Delta, c.Rows, c.RowEpsilon, c.RowDelta, d))
	}
	return c, nil
}

// Events describes rows DP-APPR rows of m as accounting events (the strict
// accounting; compose them with the DP-SGD stage in one accountant):
//
//	GM:  GaussianEvent{σ/(√2·C1), rows}          (L2 sensitivity √2·C1, see Release)
//	EM0: PureEvent{ε₀ = 2·C2/β, rows·K}          (K exponential-mechanism rounds per row)
//	EM1: the EM0 event and PureEvent{K·C2/b, rows} (the Laplace values)
func (m APPRMechanism) Events(rows int) ([]dp.Event, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := dp.CheckCount("number of DP-APPR rows", rows); err != nil {
		return nil, err
	}
	switch m.Kind {
	case APPRGM:
		return []dp.Event{dp.GaussianEvent{Multiplier: m.GaussianStd / (math.Sqrt2 * m.Clip), Count: rows}}, nil
	case APPREM0:
		return emEvents(m.Clip, m.GumbelScale, 0, m.K, rows), nil
	case APPREM1:
		return emEvents(m.Clip, m.GumbelScale, m.LaplaceScale, m.K, rows), nil
	}
	return nil, errors.New("dpar: DP-APPR mechanism none is not private and has no events")
}

// emEvents: rows·k exponential-mechanism rounds of ε₀ = 2·c2/β, and rows
// Laplace releases of k·c2/b when b > 0.
func emEvents(c2, beta, b float64, k, rows int) []dp.Event {
	ev := []dp.Event{dp.PureEvent{Epsilon: 2 * c2 / beta, Count: rows * k}}
	if b > 0 {
		ev = append(ev, dp.PureEvent{Epsilon: float64(k) * c2 / b, Count: rows})
	}
	return ev
}

// APPRBudget is the budget of the DP-APPR stage, before amplification by
// node subsampling (see Amplification.Inner).
type APPRBudget struct {
	Rows       int     // M, the number of DP-APPR rows
	Epsilon    float64 // ε_pr > 0
	Delta      float64 // δ_pr ∈ (0, 1)
	Accounting APPRAccounting
	// ValueShare is, for EM1, the share of the budget spent on the Laplace
	// values: paper, ε₂ = s·ε_v and the top-K selection gets (1−s)·ε_v;
	// strict, ε₂ = s/(1−s)·K·ε₀. 0 means ½ (the code's ε₂ = ε₁).
	ValueShare float64
}

// CalibrateAPPR returns the mechanism of the given kind whose cost (Cost
// with b.Accounting) over b.Rows rows is at most (b.Epsilon, b.Delta).
//
// APPRPaper (DPAR §3.1 and App. B): ε_v = h_M(ε_pr), δ_v = δ_pr/(2M)
// (KairouzStepBudget); GM σ = ClassicalGaussianStd(ε_v, δ_v, C1); EM0
// β = GumbelTopKScale(ε_v, δ_v, K, C2); EM1 the same from (1−s)·ε_v, and
// b = K·C2/(s·ε_v).
//
// APPRStrict: GM σ = z·√2·C1 with z from dp.CalibrateNoise of M Gaussian
// releases on the exact GDP accountant; EM0/EM1 the smallest β (b tied to
// it by ValueShare) whose Events the RDP accountant puts within the budget,
// by dp.CalibrateNoise too.
//
// It stays a calibrator of its own, beside run.Calibrate, because it
// computes something else: not one multiplier for a plan, but the
// parameters of one of three mechanisms (a Gaussian std, or a Gumbel top-K
// scale with its Laplace scale tied by ValueShare), under the paper's
// closed forms (Kairouz's per-row budget, the classical Gaussian, the
// Gumbel top-K bound) or the strict search, for DP-APPR's share of a
// budget that DPAR then splits with DP-SGD.
func CalibrateAPPR(kind APPRKind, k int, clip float64, b APPRBudget) (APPRMechanism, error) {
	m := APPRMechanism{Kind: kind, K: k, Clip: clip}
	if kind == APPRNone {
		return APPRMechanism{}, errors.New("dpar: DP-APPR mechanism none is not private and has nothing to calibrate")
	}
	if err := dp.CheckCount("DP-APPR top-K size K", k); err != nil {
		return APPRMechanism{}, err
	}
	if err := dp.CheckPositiveFinite("DP-APPR clip bound", clip); err != nil {
		return APPRMechanism{}, err
	}
	if err := dp.CheckCount("number of DP-APPR rows", b.Rows); err != nil {
		return APPRMechanism{}, err
	}
	if err := dp.CheckPositiveFinite("DP-APPR epsilon", b.Epsilon); err != nil {
		return APPRMechanism{}, err
	}
	if err := dp.CheckDelta(b.Delta); err != nil {
		return APPRMechanism{}, err
	}
	s := b.ValueShare
	if s == 0 {
		s = 0.5
	}
	if !(s > 0 && s < 1) {
		return APPRMechanism{}, fmt.Errorf("dpar: DP-APPR value share must lie in (0, 1), got %g", b.ValueShare)
	}
	var err error
	switch {
	case kind < APPREM0 || kind > APPRGM:
		return APPRMechanism{}, fmt.Errorf("dpar: unknown DP-APPR mechanism %d", int(kind))
	case b.Accounting == APPRPaper:
		err = m.calibratePaper(b, s)
	case b.Accounting == APPRStrict:
		err = m.calibrateStrict(b, s)
	default:
		err = fmt.Errorf("dpar: unknown DP-APPR accounting %d", int(b.Accounting))
	}
	if err != nil {
		return APPRMechanism{}, err
	}
	return m, nil
}

func (m *APPRMechanism) calibratePaper(b APPRBudget, s float64) error {
	epsV, deltaV, err := KairouzStepBudget(b.Epsilon, b.Delta, b.Rows)
	if err != nil {
		return err
	}
	switch m.Kind {
	case APPRGM:
		m.GaussianStd, err = ClassicalGaussianStd(epsV, deltaV, m.Clip)
	case APPREM0:
		m.GumbelScale, err = dp.GumbelTopKScale(epsV, deltaV, m.K, m.Clip)
	case APPREM1:
		m.LaplaceScale = float64(m.K) * m.Clip / (s * epsV)
		m.GumbelScale, err = dp.GumbelTopKScale((1-s)*epsV, deltaV, m.K, m.Clip)
	}
	return err
}

func (m *APPRMechanism) calibrateStrict(b APPRBudget, s float64) error {
	if m.Kind == APPRGM {
		z, err := dp.CalibrateNoise(b.Epsilon, b.Delta, "gdp", func(z float64) []dp.Event {
			return []dp.Event{dp.GaussianEvent{Multiplier: z, Count: b.Rows}}
		})
		m.GaussianStd = z * math.Sqrt2 * m.Clip
		return err
	}
	// b_Laplace = β·(1−s)/(2s) gives ε₂ = K·C2/b = s/(1−s)·K·ε₀.
	ratio := 0.0
	if m.Kind == APPREM1 {
		ratio = (1 - s) / (2 * s)
	}
	beta, err := dp.CalibrateNoise(b.Epsilon, b.Delta, "rdp",
		func(beta float64) []dp.Event { return emEvents(m.Clip, beta, ratio*beta, m.K, b.Rows) })
	m.GumbelScale, m.LaplaceScale = beta, ratio*beta
	return err
}

// optimalCompositionDelta is the smallest δ at which k-fold adaptive
// composition of (eps0, delta0)-DP mechanisms is guaranteed (eps, δ)-DP:
// the exact optimal composition of Kairouz, Oh & Viswanath (2017, Thm 3.3),
// extended between its grid points ε = (k−2i)·eps0 by the hockey-stick
// divergence of k-fold randomised response,
//
//	δ = 1 − (1−δ₀)^k·(1 − Σ_{l : (k−2l)ε₀ > ε} C(k,l)·(e^{(k−l)ε₀} − e^{ε+lε₀}) / (1+e^{ε₀})^k).
func optimalCompositionDelta(eps0, delta0 float64, k int, eps float64) float64 {
	logNorm := float64(k) * softplus(eps0) // ln (1+e^{ε₀})^k
	var s float64
	for l := 0; l <= k && float64(k-2*l)*eps0 > eps; l++ {
		logC := logChoose(k, l)
		s += math.Exp(logC+float64(k-l)*eps0-logNorm) * -math.Expm1(eps-float64(k-2*l)*eps0)
	}
	if s >= 1 {
		return 1
	}
	return -math.Expm1(float64(k)*math.Log1p(-delta0) + math.Log1p(-s))
}

// Amplification selects how the guarantee on the node-subsampled training
// graph G (rate q') transfers to the full graph Ḡ (DPAR Alg. 2, Theorem 2).
type Amplification int

const (
	// AmplifyLinear is the paper's (q'·ε, q'·δ) (Theorem 2). It understates
	// the loss: q'·ε < ln(1 + q'(e^ε − 1)) for every ε > 0.
	AmplifyLinear Amplification = iota
	// AmplifyExact is the standard bound for Poisson subsampling with
	// add/remove neighbours, (ln(1 + q'(e^ε − 1)), q'·δ) (AmplifiedEpsilon).
	AmplifyExact
)

var amplificationNames = []string{"linear", "exact"}

// String returns "linear" or "exact".
func (a Amplification) String() string {
	if a < 0 || int(a) >= len(amplificationNames) {
		return fmt.Sprintf("Amplification(%d)", int(a))
	}
	return amplificationNames[a]
}

// ParseAmplification parses "linear" or "exact" (case-insensitive).
func ParseAmplification(s string) (Amplification, error) {
	if i := slices.Index(amplificationNames, strings.ToLower(s)); i >= 0 {
		return Amplification(i), nil
	}
	return 0, fmt.Errorf("dpar: unknown amplification %q (want linear or exact)", s)
}

// Amplified returns the (ε, δ) with respect to Ḡ of a mechanism that is
// (eps, delta)-DP on a rate-q node subsample of it.
func (a Amplification) Amplified(eps, delta, q float64) (float64, float64, error) {
	if err := dp.CheckDelta(delta); err != nil {
		return 0, 0, err
	}
	switch a {
	case AmplifyLinear:
		if err := dp.CheckPositiveFinite("epsilon", eps); err != nil {
			return 0, 0, err
		}
		if err := dp.CheckRate(q); err != nil {
			return 0, 0, err
		}
		return q * eps, q * delta, nil
	case AmplifyExact:
		e, err := dp.AmplifiedEpsilon(eps, q)
		return e, q * delta, err
	}
	return 0, 0, fmt.Errorf("dpar: unknown amplification %d", int(a))
}

// Inner inverts Amplified: the budget (ε, δ) on the rate-q subsample that
// amplifies to (eps, delta) on Ḡ (linear: (ε/q, δ/q); exact:
// (ln(1 + (e^ε − 1)/q), δ/q)). δ/q must stay below 1.
func (a Amplification) Inner(eps, delta, q float64) (float64, float64, error) {
	if err := dp.CheckDelta(delta); err != nil {
		return 0, 0, err
	}
	if err := dp.CheckRate(q); err != nil {
		return 0, 0, err
	}
	if delta/q >= 1 {
		return 0, 0, fmt.Errorf("dpar: amplified delta %g at rate %g needs an inner delta %g ≥ 1", delta, q, delta/q)
	}
	switch a {
	case AmplifyLinear:
		if err := dp.CheckPositiveFinite("amplified epsilon", eps); err != nil {
			return 0, 0, err
		}
		return eps / q, delta / q, nil
	case AmplifyExact:
		e, err := dp.InnerEpsilon(eps, q)
		return e, delta / q, err
	}
	return 0, 0, fmt.Errorf("dpar: unknown amplification %d", int(a))
}

var errNilSource = errors.New("dpar: nil noise source")

// logChoose is ln C(n, k).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n) + 1)
	b, _ := math.Lgamma(float64(k) + 1)
	c, _ := math.Lgamma(float64(n-k) + 1)
	return a - b - c
}

// softplus is ln(1 + e^x), without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}
