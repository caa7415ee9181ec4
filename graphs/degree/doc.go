// Package degree owns node-level degree bounds: the one Bound type (a
// public bound, keyed sampling, or none) that every method bounding
// degrees uses, the flag pair that sets it (Flags: --max-degree D,
// --degree-bound public|sample|none), the keyed pair ranks its sampling
// draws from (Key), its stability proofs, its refusal of inputs outside a
// public bound (BoundError), the report line it writes (Bound.Use), and
// the K-hop rooted subgraphs DP-SGD trains a K-layer GNN on
// (RootedSubgraphs), whose occurrence bound under node removal,
// OccurrenceBound(K, D), rests on the bound.
//
// # What a degree bound has to prove
//
// The neighbouring relation is the raw input: G and G − v, node v removed
// with all its edges, features and label, before any preprocessing. A
// mechanism that aggregates over neighbours (NAP: row i = Σ_{j→i} x_j with
// ‖x_j‖ ≤ 1; CARIBOU's contractive layers; ASGL's training subgraphs on
// BFS trees) has a node-level sensitivity in D only if v's removal changes
// a number of aggregated entries bounded in D. Three modes, and what each
// proves:
//
//  1. Public (--degree-bound public, every method's default). D is a bound
//     on every node's degree (out-degree for Out, degree for Undirected)
//     known without looking at the data, so the universe of inputs is
//     {graphs within D}. Removing a node only lowers other nodes' degrees,
//     so the universe is closed under removal, and on it nothing needs to
//     be dropped: v's removal deletes its ≤ D entries and nothing else. An
//     input outside the universe is refused before anything is released
//     (CheckRows), with a refusal that names the bound and nothing about
//     the input (BoundError). Proven for every raw input within D.
//
//  2. Sample (--degree-bound sample; the papers' "bound the degree by
//     random sampling", kept as their assumption mode). Every node keeps
//     at most D edges chosen by ranks keyed by a Key drawn from the
//     mechanism source: SampleOut for out-degrees (GAP, ProGAP),
//     SampleSymmetric for the degrees of an undirected graph (ASGL's
//     constrained BFS trees). On a graph already within D sampling is the
//     identity, so mode 1's guarantee holds there. On any other graph v's
//     removal also changes other nodes' samples — for SampleOut every node
//     that kept an edge to v promotes another out-neighbour (their number
//     is v's in-degree, unbounded in D); for SampleSymmetric every slot v
//     frees starts an alternating chain of swapped edges (unbounded in
//     length) — so the sensitivity in D is not proven for raw graphs, and
//     the report says the guarantee assumes the input is within D.
//
//  3. None (--degree-bound none). The raw graph, bounded by nothing: for
//     runs without privacy or accountings whose report states ε = ∞.
//
// Why not a cleverer projection. Every degree-bounding transform we know
// fails in one of two ways under node removal, and a transform with a
// change bounded in D alone for all raw graphs is not known (docs/privacy.md
// has the analysis; the counterexamples are tests here):
//   - per-node choices (keep the D smallest keyed ranks, keep an edge when
//     both endpoints rank it among their D, drop the edges of nodes above a
//     threshold, weight by 1/degree) let v's removal change the choice of
//     each of v's neighbours, and v has unboundedly many;
//   - global greedy choices (visit pairs in a keyed order and keep a pair
//     while both endpoints have capacity: the stable-ordering projection of
//     Day, Li & Lyu, SIGMOD 2016, and SampleSymmetric) confine the change
//     to ≤ D freed slots, but each freed slot starts an alternating chain
//     of swapped edges whose length nothing bounds (on a path with D = 1
//     every edge flips). Day, Li & Lyu bound the change of the degree
//     histogram, which is constant along a chain; the edges themselves are
//     not.
//
// And under a public bound Δ ≥ D a projection to D cannot beat no
// projection: v's own Δ entries cost √Δ, and a projection's knock-on
// changes come on top of what v's removal does to its own entries.
package degree
