package trainers

import (
	"encoding/json"
	"math"

	"github.com/dpgnn/dpgnn/dp"
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
	PrivacyReport   *dp.Report         `json:"privacy_report,omitempty"`
	Seconds         float64            `json:"seconds"`
	// SecureNoise is true when the mechanisms' randomness came from
	// crypto/rand rather than from Seed.
	SecureNoise bool `json:"secure_noise,omitempty"`
}

// Eps converts ε to its JSON form (nil for +Inf or NaN).
func Eps(e float64) *float64 { return dp.EpsilonJSON(e) }

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
