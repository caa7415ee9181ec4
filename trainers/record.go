package trainers

import (
	"encoding/json"
	"math"
)

// Record is the JSON result of `dpgnn train --json` (DESIGN.md's contract).
// Epsilon is null for ε = ∞ (JSON has no infinity).
type Record struct {
	Method          string             `json:"method"`
	Dataset         string             `json:"dataset"`
	Split           string             `json:"split"`
	Privacy         string             `json:"privacy"`
	Epsilon         *float64           `json:"epsilon"`
	Delta           float64            `json:"delta"`
	Runs            int                `json:"runs"`
	Seed            uint64             `json:"seed"`
	Hyperparameters map[string]any     `json:"hyperparameters"`
	Metrics         map[string]Summary `json:"metrics"`
	PrivacyReport   *PrivacyReport     `json:"privacy_report,omitempty"`
	Seconds         float64            `json:"seconds"`
	// SecureNoise is true when the mechanisms' randomness came from
	// crypto/rand rather than from Seed.
	SecureNoise bool `json:"secure_noise,omitempty"`
}

// PrivacyReport is the privacy receipt of a run: which accountant, the ε it
// computed at δ and where δ came from, the noise levels used (noise
// multipliers, i.e. std divided by sensitivity, unless the key says
// otherwise), the ledger of events, and every use of private data the run
// made with how it is covered.
type PrivacyReport struct {
	Level       string             `json:"level"`
	Accountant  string             `json:"accountant"`
	Epsilon     *float64           `json:"epsilon"`
	Delta       float64            `json:"delta"`
	DeltaSource string             `json:"delta_source,omitempty"`
	Noise       map[string]float64 `json:"noise,omitempty"`
	Ledger      []string           `json:"ledger,omitempty"`
	Uses        []PrivateUse       `json:"uses,omitempty"`
	Notes       string             `json:"notes,omitempty"`
}

// PrivateUse is one use of private data by a run.
type PrivateUse struct {
	// Kind is release (a mechanism's output), dp-sgd, selection (model
	// selection on labels), degree-bound (how the graph's degrees were
	// bounded) or evaluation (metrics for the experimenter).
	Kind string `json:"kind"`
	What string `json:"what"`
	// Epsilon is the ε of this use alone at the report's δ, under the
	// report's accountant (absent when the use releases nothing).
	Epsilon *float64 `json:"epsilon,omitempty"`
	// Covered says how the guarantee covers it: "accounted",
	// "public data", "not released", or what it assumes.
	Covered string `json:"covered"`
}

// Eps converts ε to its JSON form (nil for +Inf or NaN).
func Eps(e float64) *float64 {
	if math.IsInf(e, 0) || math.IsNaN(e) {
		return nil
	}
	return &e
}

// MarshalJSON replaces NaN values (e.g. validation accuracy without a
// validation set) with null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type out struct {
		Mean   *float64   `json:"mean"`
		Std    *float64   `json:"std"`
		CI95   *float64   `json:"ci95"`
		Values []*float64 `json:"values"`
	}
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	o := out{Mean: f(s.Mean), Std: f(s.Std), CI95: f(s.CI95), Values: make([]*float64, len(s.Values))}
	for i, v := range s.Values {
		o.Values[i] = f(v)
	}
	return json.Marshal(o)
}
