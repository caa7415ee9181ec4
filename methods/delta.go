package methods

// DeltaRule says where a run's δ comes from.
type DeltaRule string

const (
	// DeltaGiven is --delta D.
	DeltaGiven DeltaRule = "given"
	// DeltaAuto derives δ from public quantities only: at edge level the
	// node count N is public, and δ = 10^−d with d the number of digits of
	// the number of possible units (N(N−1) directed entries or N(N−1)/2
	// undirected pairs), a public bound on the private edge count. At node
	// level nothing countable is public, and auto is refused.
	DeltaAuto DeltaRule = "auto"
	// DeltaPaper is the method's paper convention, computed from the
	// private unit count (GAP/ProGAP: 10^−digits of the directed edges or
	// training nodes; GCON: 1/|E|). The report says it reads private data.
	DeltaPaper DeltaRule = "paper"
)
