package main

import (
	"fmt"
	"io"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/gap"
	"github.com/dpgnn/dpgnn/methods/progap"
	"github.com/spf13/cobra"
)

// apAccount is the JSON result of `account progap` and `account gap`.
type apAccount struct {
	Mechanism       string     `json:"mechanism"`
	Solve           string     `json:"solve"`
	Level           string     `json:"level"`
	Accountant      string     `json:"accountant"`
	Delta           float64    `json:"delta"`
	Hops            int        `json:"hops"`
	Noise           float64    `json:"noise"`
	NAPStd          float64    `json:"nap_std"`
	SGDStd          float64    `json:"sgd_std,omitempty"`
	Rate            float64    `json:"rate,omitempty"`
	Steps           []int      `json:"steps,omitempty"`
	Epsilon         jsonFloat  `json:"epsilon"`
	AchievedEpsilon *jsonFloat `json:"achieved_epsilon,omitempty"`
	Ledger          []string   `json:"ledger"`
}

// newAccountAPCmd builds `account progap` or `account gap`: the ε of a run
// for a given noise multiplier, or the multiplier for a target ε, from the
// same event lists the methods account with.
func newAccountAPCmd(name string) func(io.Writer) *cobra.Command {
	return func(stdout io.Writer) *cobra.Command {
		var c accountFlags
		var noise, clip float64
		var level, accountant, edgeUnit string
		var hops, trainNodes, batch, epochs, encEpochs, maxDegree int
		cmd := &cobra.Command{
			Use:   name + " (--noise Z | --epsilon E) --hops K --delta D [--level edge|node ...]",
			Short: fmt.Sprintf("%s: ε of a run from its noise multiplier, or the multiplier for a target ε", name),
			Long: fmt.Sprintf(`Account for a %s run exactly as 'dpgnn train %s' does.

Edge level: K NAP calls, each a Gaussian mechanism of L2 sensitivity 1 with noise
std z (the noise multiplier) when the privacy unit is one directed edge (the
papers' convention); with --edge-unit undirected an edge {i,j} changes two rows,
the sensitivity is √2 and the std z·√2. The default accountant gdp composes them
exactly; rdp-standard is the RDP route (Theorem 4.1 of ProGAP); rdp uses the
improved conversion.

Node level: out-degrees bounded by D, so each NAP call has sensitivity √D and
std z·√D; plus DP-SGD runs (Poisson rate q = B/N_train, ⌈epochs/q⌉ steps each,
noise z·C), all with one multiplier z, composed in RDP. %s`, name, name, map[string]string{
				"progap": "ProGAP trains K+1 stages with DP-SGD.",
				"gap":    "GAP trains the encoder and the classifier with DP-SGD.",
			}[name]),
			Example: fmt.Sprintf(`  dpgnn account %s --level edge --hops 2 --epsilon 1 --delta 1e-7
  dpgnn account %s --level node --hops 2 --noise 1.04 --train-nodes 19804 --batch-size 256 --epochs 10 --delta 1e-5`, name, name),
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				lv, err := methods.ParseLevel(level)
				if err != nil || lv == methods.None {
					return fmt.Errorf("--level must be edge or node, got %q", level)
				}
				if err := requiredCount(cmd, "hops", hops); err != nil {
					return err
				}
				calibrate, err := c.accountMode(cmd, "noise", noise)
				if err != nil {
					return err
				}
				r := apAccount{Mechanism: name, Solve: "epsilon", Level: level, Delta: c.delta, Hops: hops}
				acctName := accountant
				var events func(z float64) []dp.Event
				sens := 1.0
				if lv == methods.Edge {
					switch edgeUnit {
					case methods.EdgeDirected:
					case methods.EdgeUndirected:
						sens = math.Sqrt2
					default:
						return fmt.Errorf("--edge-unit %q: want directed or undirected", edgeUnit)
					}
					events = func(z float64) []dp.Event {
						if name == "gap" {
							return gap.Events(lv, hops, z, 0, 0, 0)
						}
						return progap.Events(lv, hops, z, 0, 0)
					}
				} else {
					for _, f := range []string{"train-nodes", "batch-size", "epochs"} {
						if !cmd.Flags().Changed(f) {
							return fmt.Errorf("--%s is required at node level", f)
						}
					}
					if trainNodes <= 0 || batch <= 0 || epochs <= 0 || maxDegree <= 0 || encEpochs < 0 || !(clip > 0) {
						return fmt.Errorf("--train-nodes, --batch-size, --epochs, --max-degree and --clip must be positive")
					}
					if acctName == "gdp" {
						acctName = "rdp" // DP-SGD needs RDP
					}
					q := methods.NodeRate(batch, trainNodes)
					steps := dp.Steps(epochs, q)
					encSteps := 0
					if encEpochs > 0 {
						encSteps = dp.Steps(encEpochs, q)
					}
					sens = math.Sqrt(float64(maxDegree))
					r.Rate = q
					if name == "gap" {
						r.Steps = []int{encSteps, steps}
						events = func(z float64) []dp.Event { return gap.Events(lv, hops, z, q, encSteps, steps) }
					} else {
						r.Steps = []int{steps}
						events = func(z float64) []dp.Event { return progap.Events(lv, hops, z, q, steps) }
					}
				}
				newAcct := func() (dp.Accountant, error) { return dp.NewAccountant(acctName) }
				if _, err := newAcct(); err != nil {
					return flagError("accountant", err)
				}
				z := noise
				if calibrate {
					if z, err = dp.CalibrateNoise(c.epsilon, c.delta, events, newAcct); err != nil {
						return fmt.Errorf("calibrate the noise for --epsilon %s: %w", fmtIn(c.epsilon), err)
					}
				}
				acct, _ := newAcct()
				if err := dp.ComposeAll(acct, events(z)); err != nil {
					return err
				}
				eps, err := acct.Epsilon(c.delta)
				if err != nil {
					return err
				}
				for _, e := range acct.Ledger() {
					r.Ledger = append(r.Ledger, e.String())
				}
				r.Accountant, r.Noise, r.NAPStd = acct.Name(), z, z*sens
				if lv == methods.Node {
					r.SGDStd = z * clip
				}
				r.Epsilon = jsonFloat(eps)
				line := fmt.Sprintf("ε = %s at δ = %s (%s accountant; %s-level %s, K = %d, noise multiplier %s, NAP std %s)",
					fmtUp(eps), fmtIn(c.delta), r.Accountant, level, name, hops, fmtIn(z), fmtIn(r.NAPStd))
				if calibrate {
					r.Solve, r.Epsilon = "noise", jsonFloat(c.epsilon)
					a := jsonFloat(eps)
					r.AchievedEpsilon = &a
					line = fmt.Sprintf("noise multiplier z = %s for ε ≤ %s at δ = %s (%s accountant; %s-level %s, K = %d; NAP std %s; achieved ε = %s)",
						fmtUp(z), fmtIn(c.epsilon), fmtIn(c.delta), r.Accountant, level, name, hops, fmtUp(r.NAPStd), fmtUp(eps))
				}
				return writeAccount(stdout, c.json, r, line)
			},
		}
		f := cmd.Flags()
		f.Float64Var(&noise, "noise", 0, "noise multiplier z (NAP std = z·sensitivity; DP-SGD std = z·C): report ε")
		f.StringVar(&level, "level", "edge", "edge or node")
		f.IntVar(&hops, "hops", 0, "K, the number of NAP calls (required)")
		f.StringVar(&edgeUnit, "edge-unit", methods.EdgeDirected, "edge level: privacy unit, directed (sensitivity 1) or undirected (√2)")
		f.StringVar(&accountant, "accountant", "gdp", "edge level: gdp, rdp or rdp-standard; node level: rdp (default) or rdp-standard")
		f.IntVar(&trainNodes, "train-nodes", 0, "node level: N_train, the Poisson-sampled training nodes")
		f.IntVar(&batch, "batch-size", 0, "node level: expected batch size B")
		f.IntVar(&epochs, "epochs", 0, "node level: epochs of each DP-SGD run (a ProGAP stage, a GAP classifier)")
		if name == "gap" {
			f.IntVar(&encEpochs, "encoder-epochs", 100, "node level: encoder DP-SGD epochs (0: no encoder)")
		}
		f.IntVar(&maxDegree, "max-degree", 100, "node level: D, the out-degree bound")
		f.Float64Var(&clip, "clip", 1, "node level: DP-SGD clipping bound C")
		c.bind(cmd, "noise")
		return cmd
	}
}
