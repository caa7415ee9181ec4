// Package asgl is ASGL (Ke, Zhang, Ye, Ran & Hu, KDD 2026, "Adversarial
// Signed Graph Learning with Differential Privacy", appendix G–K):
// GraphGAN-style adversarial embedding of a signed graph with node-level
// DP, evaluated by edge-sign prediction and SSI.
//
// # The model
//
// The training edges are split into the positive graph G+ and the negative
// graph G−. A discriminator and a generator (layers.GANPlayer) each hold an
// embedding matrix and a bias shared by their positive and negative player
// (D+/D− and G+/G−; the negative player scores a pair as minus the
// positive one). Every epoch runs the positive phase, then the negative
// one; a phase runs --disc-steps discriminator steps and then --gen-steps
// generator steps (trainers.Adversarial). A step draws a fixed-size batch
// of roots, without replacement, from all n node ids, and each root r
// contributes its training subgraph S_r, sampled on the BFS tree T_r of the
// phase's walk graph truncated at depth L (walk.SignedWalker):
//
//   - discriminator: r's neighbours (at most N, chosen by a keyed per-root
//     stream when there are more) as real pairs, label 1, and the
//     terminals of N graph-softmax walks steered by the generator's scores
//     (GraphGAN's for_d walks; ASGL's softmax(1 − softmax) rule on G−) as
//     fakes, label 0, each kind averaged (eq. 4); a root whose walk meets
//     a dead end contributes nothing (GraphGAN's rule);
//   - generator: the window pairs of N walks from r (on G−, only the pairs
//     that balance theory signs negative: odd hop distance), each with the
//     reward −log(1 − D(u, v)) of the current discriminator, averaged
//     (eq. 2, per-pair policy-gradient surrogate).
//
// The released model is the discriminator's embedding matrix; the run's
// metrics (run.SignedLink) are measured on it, and the generator's
// embedding is measured too (gen_* metrics, diagnostics).
//
// # Privacy: what is proven (--accounting strict, the default)
//
// Neighbouring inputs are the raw training graph G and G − v*: node v*
// loses all its edges (both signs) and keeps its id, so the population of
// training subgraphs — one per node id, n in all — is the same on both
// sides (the id universe is public). Every private step of either player
// is the same mechanism: a batch of exactly B of the n roots drawn without
// replacement from the mechanism source, each root's gradient over its
// subgraph clipped to L2 norm C, the clipped gradients summed, Gaussian
// noise of standard deviation σ·R·C added to every coordinate of the
// player's parameters (every row, touched or not), divided by B, and given
// to the optimiser (post-processing).
//
// Claim (per step). Condition on everything released before the step (the
// parameters of both players, which are functions of the earlier noisy
// steps alone) and on the step's walk key (drawn from the mechanism source,
// independent of the data; a key may as well be public). Then a root's
// contribution is a function of its tree T_r and of that released state
// only: the real pairs are r's neighbours, the walks are steered by the
// released generator and keyed per root, and the rewards and the
// discriminator's scores come from the released discriminator. Under a
// public degree bound D (--degree-bound public: every node of G+ and of G−
// has at most D neighbours, stated without looking at the data, inputs
// above it refused), walk.SignedWalker's Claim 2 shows that T_r is the
// same in G and G − v* for every r outside the L-ball of v*, which has at
// most R = R_{D,L} = Σ_{l≤L} D^l nodes (and at most n). So at most R of the
// n contributions differ, each by at most 2C (both clipped to C; v*'s own
// subgraph becomes empty). Given that i of them are in the batch, the two
// outputs are Gaussians with the same covariance whose means differ by at
// most 2iC: Rényi divergence α(2i)²/(2σ²R²). i is hypergeometric (n, R, B)
// (or (n, R′, B) with R′ ≤ R differing roots, which is stochastically
// smaller, and the bound is increasing in i), and exp((α−1)D_α) is jointly
// convex, so the step is (α, γ(α))-RDP with γ ASGL's Theorem 2 bound with
// the 1/(α−1) restored and the change 2 of node removal
// (dp.HypergeomGaussian with Change 2).
//
// Composition. The steps are adaptive, each conditioned on the outputs
// before it, so their RDP adds: 2·epochs·(disc-steps + gen-steps) steps in
// all, T_D = 2·epochs·disc-steps at batch B_d and T_G = 2·epochs·gen-steps
// at batch B_g, converted to (ε, δ) by the RDP accountant. The noise
// multiplier σ is the smallest that keeps this within the target. Both
// embedding matrices are therefore released with the guarantee; the run
// releases the discriminator's.
//
// Why the generators are trained with noise. The paper calls the
// generators post-processing of the discriminators, but they read the
// private graph themselves: their walks run on the BFS trees of G+ and G−
// and their pairs are private edges' neighbourhoods. Trained without noise,
// θ_G depends on every edge outside any mechanism, and it steers the walks
// whose terminals are the discriminators' fakes and scores every later
// walk: on G − v* every root's fakes may change, not R of them, and the
// per-step bound above no longer holds. So the strict accounting clips and
// noises the generators' steps exactly like the discriminators' and counts
// them.
//
// The degree bound. --degree-bound public is proven as above. A signed
// graph with hubs above the paper's D = N = 3 is refused at that bound (the
// refusal names the bound only, degree.BoundError); a D large enough to
// admit hubs of hundreds of neighbours makes R_{D,L} exceed n for L ≥ 2,
// and then at most n subgraphs differ (every one). D must be stated without
// looking at the data: one read off the input's largest degree is not
// public. --degree-bound sample (formerly "cap", still accepted) keeps at
// most D edges per node with a keyed greedy (degree.SampleSymmetric, the
// paper's constrained Algorithm 1): on an input already within D the cap is the
// identity and the claim holds; above it, removing a node can change more
// than R subgraphs through chains of swapped edges (walk.TestCapNotStable),
// so the report states that the ε assumes the input is within D.
//
// # The paper's accounting (--accounting paper)
//
// σ is calibrated by Theorem 2 as printed: R = R_{N,L} of the N paths of
// at most L hops, change 1, T_D discriminator steps only, Mironov's
// conversion, the generators trained without clipping or noise as
// post-processing; the noise std is σ·R_{N,L}·C. That claim is not proven
// (the generators read the private graph outside the mechanism, node
// removal modifies subgraphs: change 2, and without a degree bound R_{N,L}
// bounds nothing), so the report states ε = ∞ (JSON null), lists the
// generators as a use that nothing covers, and gives the paper's figure in
// its notes. --degree-bound none (the raw graph, as the authors' code has
// it) is accepted only here and without privacy.
//
// Without privacy (--privacy none or ε = ∞) the same loop runs without
// clipping and noise; the degree bound is then only applied with
// --degree-bound sample (the same pipeline without noise), and public walks
// the raw graph.
package asgl
