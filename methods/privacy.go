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

// Calibrated is a calibrated noise multiplier with its privacy receipt.
type Calibrated struct {
	Multiplier float64
	Report     *trainers.PrivacyReport
}

// Calibrate finds the smallest noise multiplier z whose events(z) meet the
// context's (ε, δ) under the named accountant (gdp, rdp, rdp-standard),
// accounts for them once more with a fresh accountant, and returns z with
// the privacy report (ledger included). δ "auto" uses units. Without
// privacy (ε = ∞ or level none) z is 0. noise adds method-specific noise
// levels (stds) to the report.
func Calibrate(ctx *Context, units int, accountant string, events func(z float64) []dp.Event, noise func(z float64) map[string]float64) (*Calibrated, error) {
	delta, err := ctx.ResolveDelta(units)
	if err != nil {
		return nil, err
	}
	if !ctx.Private() {
		return &Calibrated{Report: &trainers.PrivacyReport{Level: string(ctx.Level), Accountant: "none",
			Delta: delta, Noise: noise(0), Notes: "ε = ∞: the same pipeline without noise"}}, nil
	}
	newAcct := func() (dp.Accountant, error) { return dp.NewAccountant(accountant) }
	z, err := dp.CalibrateNoise(ctx.Epsilon, delta, events, newAcct)
	if err != nil {
		return nil, fmt.Errorf("calibrating the noise for ε=%g, δ=%g: %w", ctx.Epsilon, delta, err)
	}
	acct, err := newAcct()
	if err != nil {
		return nil, err
	}
	if err := dp.ComposeAll(acct, events(z)); err != nil {
		return nil, err
	}
	eps, err := acct.Epsilon(delta)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(eps) || eps > ctx.Epsilon*(1+1e-9) {
		return nil, fmt.Errorf("calibrated noise gives ε=%g above the target %g", eps, ctx.Epsilon)
	}
	nz := noise(z)
	nz["multiplier"] = z
	var ledger []string
	for _, e := range acct.Ledger() {
		ledger = append(ledger, e.String())
	}
	return &Calibrated{Multiplier: z, Report: &trainers.PrivacyReport{Level: string(ctx.Level),
		Accountant: acct.Name(), Epsilon: trainers.Eps(eps), Delta: delta, Noise: nz, Ledger: ledger}}, nil
}

// SGDPrivacy is kept for DP-MLP: a calibrated DP-SGD run.
type SGDPrivacy = Calibrated

// CalibrateSGD calibrates one Poisson-subsampled Gaussian DP-SGD run of
// `steps` steps at rate q over n samples (RDP accountant with the given
// conversion).
func CalibrateSGD(ctx *Context, n int, q float64, steps int, clip float64, conv dp.Conversion) (*Calibrated, error) {
	name := "rdp"
	if conv == dp.ConversionStandard {
		name = "rdp-standard"
	}
	return Calibrate(ctx, n, name,
		func(z float64) []dp.Event {
			return []dp.Event{dp.PoissonGaussianEvent{Rate: q, Multiplier: z, Steps: steps}}
		},
		func(z float64) map[string]float64 {
			return map[string]float64{"std": z * clip, "clip": clip, "rate": q, "steps": float64(steps)}
		})
}
