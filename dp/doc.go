// Package dp owns dpgnn's differential-privacy core: the mechanisms
// (Gaussian, Laplace, Gumbel top-K), the seeded noise source (ChaCha8 and
// AES-256-CTR streams, a float64 ziggurat for normal draws), the privacy
// events that describe what a mechanism released, the accountants that
// turn a ledger of events into (ε, δ) (privacy-loss distributions by
// pessimistic discretisation and FFT composition; Rényi DP with the
// Poisson- and hypergeometrically subsampled Gaussian, the exact group
// pair and the contractive noisy iteration; exact Gaussian / Gaussian DP),
// the RDP → (ε, δ) conversions, noise calibration by conservative search
// (exported as SearchAbove for the bounds a method keeps to itself: DPAR's
// Kairouz composition and GCON's Gamma-norm tail live under their
// methods), the δ "auto" rule, privacy plans, ledgers, the recorders
// through which every mechanism writes its releases, reports, and the
// audit statistics. It builds no expression graph: the privacy nodes of gorgonia
// models (DP-SGD, objective perturbation) are in dp/dpnn.
//
// The package separates what was released from how it is accounted, as
// Google's dp_accounting does: a mechanism is a plain config struct with a
// sampler (Gaussian{Multiplier, Sensitivity}); an Event is an immutable
// description of a release, composed from base mechanisms (GaussianEvent,
// GDPEvent, PureEvent, RDPEvent) and wrappers (Poisson,
// SampledWithoutReplacement, Occurrences, Composed, ComposedEvent), open to
// mechanisms defined outside dp (Event, RDPer); an Accountant computes from
// the structure with a checks-then-commits Compose (a rejected event leaves
// no partial state), refuses every structure it has no rule for
// (UnsupportedEventError), and keeps the ledger.
//
// Units. A noise multiplier z is the noise standard deviation divided by the
// L2 sensitivity of the whole released sum under the neighbouring relation
// (for Occurrences: R·Change·C); the standard deviation is z·Δ. Events are stated in
// multipliers (sensitivity normalised to 1), so sensitivity never enters the
// accounting twice. ε and the RDP values are in nats. δ is a probability in
// (0, 1).
//
// Every accountant errs on the conservative side: root finders and
// calibration return the end of the bracket whose ε is at least the true ε
// (accounting) or at most the target (calibration); numerical failures in an
// RDP order make that order +Inf instead of a smaller value.
//
// Errors start with "dp: ". Nothing here panics on user input.
package dp
