package layers

import "math"

// Sensitivities of one CGL application: the largest Frobenius change
// sup_{X ∈ 𝒦} ‖CGL_G(X) − CGL_G′(X)‖_F between neighbouring graphs, over
// inputs whose rows have norm ≤ 1. This is the s of the contractive noisy
// iteration (dp.CNIFactor): the PCMP noise std is s times the multiplier.
//
// The bounds are for the floored normalisation of NewCGLFloored with a
// public floor D, and they hold for EVERY graph: nothing about the input's
// minimum degree is assumed, so the neighbour of an accepted graph (one
// edge or one node fewer, which lowers degrees) is covered by the same Δ.
// (Before the floor, D was an assumed minimum degree and a graph below it
// was refused: then a graph at the bound was accepted and its neighbour
// refused, a refusal that is itself a release.)
//
// Notation: t(a) = max(a, D) + 1 is the normalising degree of a node of
// degree a (without self-loop), r(a) = 1/√t(a) its row factor, so Â_uw =
// r(d_u)·r(d_w). Always t(a) ≥ a + 1 and t(a) ≥ D + 1. Further
//
//	ε(a) = r(a) − r(a+1)       — one entry's factor change when a grows by one:
//	                              0 for a < D (both floored), 1/√(a+1) − 1/√(a+2) for a ≥ D
//	f(a) = a·ε(a)              — a row's drift when its degree grows by one
//	C(D) = sup_{a ≥ D} f(a) = f(max(D, 3))   (f rises on 0..3, falls after; CARIBOU eq. 7)
//	κ(D) = sup_{a ≥ D} a·ε(a)²              (at most 0.0168, at a = 1; ≤ 1/(4(D+1)²))
//	p = 1/((D+1)(D+2)), q = C(D)/√(D+1), s = 1/√((D+1)(D+2)).
//
// Proof technique (used by both levels): write each changed entry as
// r(d_i)r(d_j) − r(d′_i)r(d′_j) = [r(d_i) − r(d′_i)]·r(d_j) + r(d′_i)·[r(d_j) − r(d′_j)]
// — a row-degree part and a column-degree part — and bound the row of
// ΔÂ·X by the ℓ1 norm of its coefficients (rows of X have norm ≤ 1). The
// column-degree parts land in rows x adjacent to a node j whose degree
// changed; with S_x the set of such j, Cauchy–Schwarz, |S_x| ≤ d_x and
// r(d_x)² ≤ 1/(d_x+1) give Σ_x (Σ_{j∈S_x} ε(d_j)·r(d_x))² ≤ Σ_j d_j·ε(d_j)²
// ≤ (#changed degrees)·κ(D). CARIBOU's Theorems 8 and 9 leave this
// column-degree part out (their proofs change only the rows of the
// endpoints and their own entries); EdgeSensitivity and NodeSensitivity
// include it.

// cglF is f(a) = a/√(a+1) − a/√(a+2).
func cglF(a float64) float64 { return a/math.Sqrt(a+1) - a/math.Sqrt(a+2) }

// CGLC is C(D) = sup over integer degrees a ≥ D of f(a) (CARIBOU eq. 7/14:
// f(D) for D > 3, f(3) = 3/2 − 3/√5 for D ≤ 3).
func CGLC(dmin int) float64 { return cglF(float64(max(dmin, 3))) }

// cglKappa is κ(D) = sup over integer a ≥ D of a·(r(a) − r(a+1))²; the
// function is decreasing for a ≥ 1 and 0 at a = 0.
func cglKappa(dmin int) float64 {
	a := float64(max(dmin, 1))
	e := 1/math.Sqrt(a+1) - 1/math.Sqrt(a+2)
	return a * e * e
}

// edgeRow is the per-endpoint row bound of an added edge {u, v} whose
// endpoints are both at or above the floor (Thm 8's bracket with the new
// entry bounded by 1/(D+2)): own self-loop entry p, own old entries q, the
// new entry 1/(D+2).
func edgeRow(d float64, c float64) float64 {
	return 1/((d+1)*(d+2)) + c/math.Sqrt(d+1) + 1/(d+2)
}

// EdgeSensitivityPaper is Δ_e of CARIBOU Theorem 8 (eq. 6):
//
//	√2·C_L·α₁·( 1/((D+1)(D+2)) + C(D)/√(D+1) + 1/(√(D+2)·√(D+1)) ),  D = D_min.
func EdgeSensitivityPaper(lipschitz, alpha1 float64, dmin int) float64 {
	d := float64(dmin)
	return math.Sqrt2 * lipschitz * alpha1 * (1/((d+1)*(d+2)) + CGLC(dmin)/math.Sqrt(d+1) + 1/(math.Sqrt(d+2)*math.Sqrt(d+1)))
}

// EdgeSensitivity is the edge-level sensitivity the accountant uses for the
// layer with degree floor D (NewCGLFloored), valid for every graph G and
// G + e, e = {u, v} any new undirected edge: the largest of the three case
// bounds below and Theorem 8's Δ_e at D, so it equals the paper's value
// wherever that value is the largest (every D checked, 0..10⁵,
// TestCGLEdgeSensitivityPaperIsABound) and stays proven if it is not.
//
// Proof. Let a = d_u, b = d_v in G (any degrees). Only the rows of u and v
// and the entries (x, u), (x, v) of other rows change; rows are disjoint,
// so ‖ΔÂ·X‖_F² is the sum of their squared changes. Mean(X) and β·X⁽⁰⁾ do
// not depend on the edges, so ‖ΔCGL‖_F = C_L·α₁·‖ΔÂ·X‖_F.
//
//	(1) a, b ≥ D. Row u: its self-loop changes by 1/(a+1) − 1/(a+2) ≤ p; each
//	    of its a old entries (u, w) by ε(a)·r(d_w) ≤ ε(a)/√(D+1), together
//	    ≤ f(a)/√(D+1) ≤ q; the new entry r(a+1)r(b+1) ≤ 1/(D+2) (t(a+1) =
//	    a+2 ≥ D+2): ‖Δrow_u‖ ≤ S₁ = p + q + 1/(D+2) = edgeRow. Row v likewise.
//	    Every other row x changes in (x, u) by r(d_x)ε(a) if x ∈ N(u) and in
//	    (x, v) by r(d_x)ε(b) if x ∈ N(v); with r(d_x)² ≤ 1/(D+1) the squares
//	    total ≤ 2(aε(a)² + bε(b)²)/(D+1) ≤ 4κ(D)/(D+1).
//	    Bound: √(2S₁² + 4κ(D)/(D+1)).
//	(2) a ≥ D > b (or the mirror case). Row u as in (1) but the new entry is
//	    r(a+1)r(b+1) ≤ 1/√((D+2)(D+1)) = s (t(b+1) = D+1): ≤ S₂ = p + q + s.
//	    Row v: t(b) = t(b+1) = D+1, so its self-loop and old entries do not
//	    change; only the new entry, ≤ s. Other rows: only the (x, u) entries,
//	    ≤ aε(a)²/(D+1) ≤ κ(D)/(D+1). Bound: √(S₂² + s² + κ(D)/(D+1)).
//	(3) a, b < D. Nothing but the new entries changes, each r(a+1)r(b+1) =
//	    1/(D+1). Bound: √2/(D+1).
//
// Cases (2) and (3) need D ≥ 1. Theorem 8's value √2·S₂ is at least each
// case bound: (3) as S₂ ≥ s + p ≥ 1/(D+1); (2) as S₂² ≥ s² + 2sq and
// κ(D)/(D+1) ≤ 1/(4(D+1)³) ≤ 2sq for D ≥ 1; (1) analytically for D ≥ 3
// and by the test for all D up to 10⁵. The maximum is taken anyway, so
// the value is proven whether or not Theorem 8's is.
//
// Where Theorem 8's value is the maximum, it is returned bit for bit
// (EdgeSensitivityPaper with the same arguments), so a run with
// --sensitivity paper is accounted at exactly its own multiplier.
func EdgeSensitivity(lipschitz, alpha1 float64, floor int) float64 {
	return math.Max(lipschitz*alpha1*edgeCaseBound(floor), EdgeSensitivityPaper(lipschitz, alpha1, floor))
}

// edgeCaseBound is the maximum of EdgeSensitivity's three case bounds,
// divided by C_L·α₁.
func edgeCaseBound(floor int) float64 {
	d := float64(floor)
	c, k := CGLC(floor), cglKappa(floor)
	s1 := edgeRow(d, c)
	v := math.Sqrt(2*s1*s1 + 4*k/(d+1))
	if floor >= 1 {
		sn := 1 / math.Sqrt((d+1)*(d+2))
		s2 := 1/((d+1)*(d+2)) + c/math.Sqrt(d+1) + sn
		v = math.Max(v, math.Max(math.Sqrt(s2*s2+sn*sn+k/(d+1)), math.Sqrt2/(d+1)))
	}
	return v
}

// nodeRowDrift is the row-degree part of Thm 9's bound on one neighbour's
// row when node v is removed: its self-loop entry and its old entries.
func nodeRowDrift(d, c float64) float64 {
	return 1/((d+1)*(d+2)) + c/math.Sqrt(d+1)
}

// NodeSensitivityPaper is Δ_n of CARIBOU Theorem 9 (eq. 8):
//
//	1 + α₂·C_L·2n/(n+1) + α₁·C_L·( √D_max/((D+1)(D+2)) + C(D)·√D_max/√(D+1) + 1/√(D+2) ),
//
// D = D_min. Its leading 1 bounds the added node's own row, which is not a
// bound: that row is C_L(α₁(ÂX)_v + α₂·mean) + β·X⁽⁰⁾_v, whose norm can
// reach C_L(α₁√(D_max+1) + α₂) + β. Kept for comparison with the paper;
// NodeSensitivity is what runs use.
func NodeSensitivityPaper(lipschitz, alpha1 float64, dmin, dmax, n int) float64 {
	d := float64(dmin)
	nf := float64(n)
	return 1 + (1-alpha1)*lipschitz*2*nf/(nf+1) + alpha1*lipschitz*(math.Sqrt(float64(dmax))*nodeRowDrift(d, CGLC(dmin))+1/math.Sqrt(d+2))
}

// NodeSensitivity is the node-level sensitivity proven here for the layer
// with degree floor D (NewCGLFloored), for every graph whose degrees are at
// most dmax (a public bound; removing a node only lowers degrees, so its
// neighbour is within dmax too) and no assumption on the minimum degree:
//
//	Δ_n = √(A² + B²),
//	A = C_L·(α₁·√(D_max+1) + α₂) + β,
//	B = C_L·α₁·(√D_max·(p + q) + √(D_max/((D+2)(D_max+1))) + √(D_max·κ(D))) + C_L·α₂.
//
// The neighbour is the code base's: G′ = G − v keeps v's id (cmd/dpgnn's
// --remove-node). v's edges are gone, its feature row is zero, its label
// and split membership are gone, and v is an isolated id, so CGL_G′ acts
// on the same N rows as CGL_G, with t(0) = D+1 for v (a self-loop of
// weight 1/(D+1)). Every row is compared, v's own included. The inputs:
// X⁽⁰⁾′ = X⁽⁰⁾ off row v (a row of X⁽⁰⁾ is a function of the released
// encoder and of that node's own features only), and X⁽⁰⁾′_v = 0, since
// PCMP's input row of a node whose feature row is zero is 0
// (methods/caribou, pcmpInput). The bound needs that: were X⁽⁰⁾′_v any
// unit vector (an encoder's biases), β‖X⁽⁰⁾_v − X⁽⁰⁾′_v‖ would reach 2β
// (TestCGLIsolatedNodeSensitivity finds Δ_n exceeded then).
//
// What the contractive noisy iteration (dp.CNIFactor) needs is a common
// start and, at every hop k, C_L-Lipschitz maps φ_k on G and φ′_k on G′
// with sup over Y ∈ 𝒦 of ‖φ_k(Y) − φ′_k(Y)‖_F ≤ Δ_n. Start both at G's
// X⁽⁰⁾. At hop 1, G′ computes CGL_G′(X⁽⁰⁾′) = CGL_G′(P_v·X⁽⁰⁾), P_v
// setting row v to 0 (1-Lipschitz, so φ′_1 = CGL_G′∘P_v is a
// C_L-contraction); at hops k ≥ 2, φ′_k = CGL_G′, whose input row v (the
// previous hop's noise, mean and residual) enters Â′'s row v and the mean
// as it is. Â′ = Â_{G′} has no entry in row or column v but (v, v) =
// 1/(D+1), and its other rows are those of G with v deleted. Rows are
// disjoint, so ‖ΔCGL‖_F² = ‖row v‖² + ‖the other rows‖².
//
// Proof. (i) Row v, with d = d_v. At hop k ≥ 2 the two means are of the
// same Y, so row v changes by C_L·α₁·(Σ_{j∈N(v)} Â_vj·Y_j + (Â_vv −
// 1/(D+1))·Y_v) + β·X⁽⁰⁾_v. Â_vj = r(d)·r(d_j) ≤ 1/√(2(d+1)) (d_j ≥ 1, so
// t(d_j) ≥ 2); 1/(D+1) − Â_vv is 0 for d ≤ D and 1/(D+1) − 1/(d+1) ≤
// d/(d+1) above; so the ℓ1 weight is ≤ d/√(2(d+1)) + d/(d+1) ≤ √(d+1),
// because √(d+1) times the left side is ≤ d/√2 + √d ≤ d + 1 ((1 − 1/√2)s²
// − s + 1 > 0 for every s: its discriminant is 2√2 − 3 < 0). At hop 1 it
// changes by C_L·(α₁·(Â·Y)_v + α₂·Y_v/N) + β·X⁽⁰⁾_v (P_v·Y has 0 in row v,
// and its mean is Y's minus Y_v/N); each of the d + 1 entries of Â's row v
// is ≤ 1/√t(d) ≤ 1/√(d+1), so the row's norm is ≤ C_L(α₁√(d+1) + α₂/N)
// + β. Either way ‖row v‖ ≤ C_L(α₁√(D_max+1) + α₂) + β = A.
// (ii)+(iii) A neighbour w of v (d_w ≥ 1 in G) loses the entry Â_wv·Y_v
// (Â′_wv = 0, and P_v changes no row w ≠ v of Â′·Y) and its degree drops
// by one. If d_w > D, t(d_w) ≥
// D+2, so the lost entry is ≤ 1/√(t(d_v)(D+2)), and the row-degree parts
// of row w (its self-loop and its other entries) are ≤ p + q as in
// EdgeSensitivity. If d_w ≤ D (then D ≥ 1), t(d_w) = t(d_w − 1) = D+1: no
// row-degree part, and the lost entry is 1/√(t(d_v)(D+1)) ≤
// 1/√(t(d_v)(D+2)) + ε(D) ≤ 1/√(t(d_v)(D+2)) + p + q (ε(D) ≤ q for D ≥ 2,
// ε(1) = 0.130 < p + q = 0.279). So each of the d_v ≤ D_max rows w changes
// by ≤ 1/√(t(d_v)(D+2)) + p + q, and together (Minkowski, d_v/t(d_v) ≤
// D_max/(D_max+1)) by ≤ √(D_max/((D_max+1)(D+2))) + √D_max·(p + q).
// (iv) The column-degree parts of the entries (x, w) total ≤ √(D_max·κ(D))
// (the technique above, ε = 0 for a degree that stays floored). (v) The
// mean: no change at hops k ≥ 2; at hop 1 every row w ≠ v moves by Y_v/N,
// ≤ √(N−1)/N ≤ 1/2 over those rows. The residual β·X⁽⁰⁾ of every node but
// v is the same in G and G′. With B the C_L-weighted sum of (ii)–(v)
// (Minkowski), ‖ΔCGL‖_F ≤ √(A² + B²) at every hop. ∎ The same Δ_n covers
// the other representation of G − v, v deleted (N − 1 rows) and its row
// of the release padded as 0: row v is then the whole of G's, of norm
// ≤ C_L(α₁√(D_max+1) + α₂) + β = A (a mean row has norm ≤ 1), and the
// mean over N − 1 rows moves by ≤ 2√(N−1)/N ≤ 1
// (TestCGLFlooredNodeSensitivity). The value is the formula of before the
// floor (with D the assumed minimum degree of G − v then); the floor makes
// it hold for every graph, and the isolated v (degree 0, below any floor)
// is neither refused nor charged apart.
//
// Theorem 9 (NodeSensitivityPaper) bounds (i) by 1, which is not a bound:
// with β = 0, C_L = 0.99 and v joined to every node of a 14-cycle the
// change is 2.223 against eq. 8's 2.142 (TestCGLNodeSensitivityEmpirical).
func NodeSensitivity(lipschitz, alpha1, beta float64, floor, dmax int) float64 {
	d := float64(floor)
	dm := float64(dmax)
	a := lipschitz*(alpha1*math.Sqrt(dm+1)+(1-alpha1)) + beta
	b := lipschitz*alpha1*(math.Sqrt(dm)*nodeRowDrift(d, CGLC(floor))+math.Sqrt(dm/((d+2)*(dm+1)))+math.Sqrt(dm*cglKappa(floor))) + lipschitz*(1-alpha1)
	return math.Hypot(a, b)
}
