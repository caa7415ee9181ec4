package main

import (
	"fmt"
	"io"

	"github.com/dpgnn/dpgnn/methods/gcon"
	"github.com/spf13/cobra"
)

// gconAccount is the JSON result of `account gcon`.
type gconAccount struct {
	Mechanism         string    `json:"mechanism"`
	Epsilon           jsonFloat `json:"epsilon"`
	AccountedEpsilon  jsonFloat `json:"accounted_epsilon"`
	Delta             float64   `json:"delta"`
	Psi               float64   `json:"psi"`
	Csf               float64   `json:"c_sf"`
	LambdaRequested   float64   `json:"lambda_requested"`
	LambdaMin         float64   `json:"lambda_min"`
	Lambda            float64   `json:"lambda"`
	LambdaPrime       float64   `json:"lambda_prime"`
	CTheta            float64   `json:"c_theta"`
	EpsLambda         float64   `json:"eps_lambda"`
	Beta              jsonFloat `json:"beta"`
	ExpectedNoiseNorm float64   `json:"expected_noise_norm"`
}

// newAccountGCONCmd builds `account gcon`: GCON's objective-perturbation
// calibration (gcon.md §3.3) for given hyperparameters.
func newAccountGCONCmd(stdout io.Writer) *cobra.Command {
	var eps, delta, alpha, lambda, huber, omega float64
	var xiSpec string
	var stepsSpec, lossName string
	var classes, n1, dim int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "gcon --epsilon E --delta D --classes C --n1 N --dim D [--alpha A --steps S --lambda L --loss ...]",
		Short: "gcon: objective-perturbation calibration (Λ used, Λ', β, c_θ, ε_Λ, E‖b‖ = d/β)",
		Example: `  dpgnn account gcon --epsilon 1 --delta 6.129e-5 --classes 7 --n1 140 --dim 16 --alpha 0.8 --steps 2 --lambda 0.2
  dpgnn account gcon --epsilon 1 --delta 1.128e-5 --classes 3 --n1 19717 --dim 64 --alpha 0.4 --steps inf --lambda 0.01 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, f := range []string{"epsilon", "delta", "classes", "n1", "dim"} {
				if !cmd.Flags().Changed(f) {
					return fmt.Errorf("--%s is required", f)
				}
			}
			steps, err := gcon.ParseSteps(stepsSpec)
			if err != nil {
				return err
			}
			kind, err := gcon.ParseLoss(lossName)
			if err != nil {
				return err
			}
			l, err := gcon.NewLoss(kind, classes, huber)
			if err != nil {
				return err
			}
			c1, c2, c3 := l.Constants()
			xi, xiAuto, err := gcon.ParseXi(xiSpec)
			if err != nil {
				return err
			}
			cal, err := gcon.Calibrate(gcon.CalibrationInput{Epsilon: eps, Delta: delta, Omega: omega, Xi: xi, XiAuto: xiAuto, Lambda: lambda,
				C1: c1, C2: c2, C3: c3, N1: n1, Classes: classes, Dim: dim, Alpha: alpha, Steps: steps})
			if err != nil {
				return err
			}
			r := gconAccount{Mechanism: "gcon", Epsilon: jsonFloat(eps), AccountedEpsilon: jsonFloat(cal.Epsilon), Delta: delta,
				Psi: cal.Psi, Csf: cal.Csf, LambdaRequested: lambda, LambdaMin: cal.LambdaMin, Lambda: cal.Lambda,
				LambdaPrime: cal.LambdaPrime, CTheta: cal.CTheta, EpsLambda: cal.EpsLambda, Beta: jsonFloat(cal.Beta),
				ExpectedNoiseNorm: cal.ExpectedNoiseNorm(dim)}
			return writeAccount(stdout, asJSON, r,
				fmt.Sprintf("gcon objective perturbation: ε=%s (accounted %s), δ=%s", fmtIn(eps), fmtUp(cal.Epsilon), fmtIn(delta)),
				fmt.Sprintf("  Ψ        %.10g", cal.Psi),
				fmt.Sprintf("  c_sf     %.10g", cal.Csf),
				fmt.Sprintf("  Λ used   %.10g (requested %s, Λ_min %.6g, ξ %.6g)", cal.Lambda, fmtIn(lambda), cal.LambdaMin, cal.Xi),
				fmt.Sprintf("  Λ'       %.10g", cal.LambdaPrime),
				fmt.Sprintf("  c_θ      %.10g", cal.CTheta),
				fmt.Sprintf("  ε_Λ      %.10g", cal.EpsLambda),
				fmt.Sprintf("  β        %.10g", cal.Beta),
				fmt.Sprintf("  E‖b‖=d/β %.6g", cal.ExpectedNoiseNorm(dim)))
		},
	}
	f := cmd.Flags()
	f.Float64Var(&eps, "epsilon", 0, "target ε")
	f.Float64Var(&delta, "delta", 0, "δ (GCON's protocol: 1/|E| with |E| directed)")
	f.IntVar(&classes, "classes", 0, "number of classes c")
	f.IntVar(&n1, "n1", 0, "training rows n1")
	f.IntVar(&dim, "dim", 0, "d = s·d1")
	f.Float64Var(&alpha, "alpha", 0.8, "restart probability α")
	f.StringVar(&stepsSpec, "steps", "2", `step counts, e.g. "2", "0,2", "inf"`)
	f.Float64Var(&lambda, "lambda", 0.2, "requested Λ")
	f.StringVar(&lossName, "loss", "softmargin", "softmargin or pseudohuber")
	f.Float64Var(&huber, "huber-delta", 0.2, "pseudo-Huber δ_l")
	f.Float64Var(&omega, "omega", gcon.DefaultOmega, "ω")
	f.StringVar(&xiSpec, "xi", "auto", `ξ of Eq. 22, or "auto" for ξ = Λ_min (the spec's vectors use 1e-6)`)
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
