package methods

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/trainers"
)

// ResolveDelta returns the run's δ: the requested value, or the specs'
// "auto" rule (10^−digits of the number of privacy units: directed edges at
// edge level, training nodes at node level).
func (c *Context) ResolveDelta(units int) (float64, error) {
	if c.Delta > 0 {
		return c.Delta, nil
	}
	return dp.DeltaAuto(units)
}

// SGDPrivacy is the calibrated noise and the privacy receipt of a DP-SGD
// run.
type SGDPrivacy struct {
	Multiplier float64
	Report     *trainers.PrivacyReport
}

// CalibrateSGD calibrates the noise multiplier of a Poisson-subsampled
// Gaussian DP-SGD run of `steps` steps at rate q over n samples to the
// context's (ε, δ) and accounts for it with the RDP accountant. With ε = ∞
// the multiplier is 0 and the report says so.
func CalibrateSGD(ctx *Context, n int, q float64, steps int, clip float64, conv dp.Conversion) (*SGDPrivacy, error) {
	delta, err := ctx.ResolveDelta(n)
	if err != nil {
		return nil, err
	}
	if !ctx.Private() {
		return &SGDPrivacy{Report: &trainers.PrivacyReport{Level: string(ctx.Level), Accountant: "none",
			Delta: delta, Noise: map[string]float64{"multiplier": 0, "clip": clip, "rate": q, "steps": float64(steps)},
			Notes: "ε = ∞: DP-SGD with clipping and no noise"}}, nil
	}
	z, err := dp.CalibratePoissonGaussian(q, ctx.Epsilon, delta, steps, conv)
	if err != nil {
		return nil, fmt.Errorf("calibrating DP-SGD noise for ε=%g, δ=%g, q=%g, %d steps: %w", ctx.Epsilon, delta, q, steps, err)
	}
	acct, err := dp.NewRDP(dp.WithConversion(conv))
	if err != nil {
		return nil, err
	}
	if err := acct.Compose(dp.PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: steps}); err != nil {
		return nil, err
	}
	eps, err := acct.Epsilon(delta)
	if err != nil {
		return nil, err
	}
	if eps > ctx.Epsilon*(1+1e-9) || math.IsNaN(eps) {
		return nil, fmt.Errorf("calibrated DP-SGD noise gives ε=%g above the target %g", eps, ctx.Epsilon)
	}
	return &SGDPrivacy{Multiplier: z, Report: &trainers.PrivacyReport{
		Level: string(ctx.Level), Accountant: acct.Name(), Epsilon: trainers.Eps(eps), Delta: delta,
		Noise:  map[string]float64{"multiplier": z, "std": z * clip, "clip": clip, "rate": q, "steps": float64(steps)},
		Ledger: ledger(acct),
	}}, nil
}

func ledger(a dp.Accountant) []string {
	var out []string
	for _, e := range a.Ledger() {
		out = append(out, e.String())
	}
	return out
}
