package run_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	_ "github.com/dpgnn/dpgnn/methods/all"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/spf13/pflag"
)

// newMethod makes the named method with its flags set from args.
func newMethod(t testing.TB, name string, args ...string) methods.Method {
	t.Helper()
	m, err := methods.New(name)
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	methods.BindConfig(fs, m.Config())
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBaselinesOnDefaultGraph trains every baseline end to end on the
// embedded csbm graph and checks real properties: GCN beats the
// feature-only MLP (the graph carries signal), both are far above chance
// (0.2 for five classes), and DP-MLP stays within its budget.
func TestBaselinesOnDefaultGraph(t *testing.T) {
	acc := map[string]float64{}
	for _, tc := range []struct {
		name, method string
		level        methods.Level
		eps          float64
		args         []string
		min          float64
	}{
		{"gcn", "gcn", methods.None, math.Inf(1), []string{"--epochs", "100"}, 0.8},
		{"mlp", "mlp", methods.None, math.Inf(1), []string{"--epochs", "100"}, 0.4},
		{"dp-mlp", "mlp", methods.Node, 4, []string{"--epochs", "10", "--batch-size", "64", "--dropout", "0"}, 0.35},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMethod(t, tc.method, tc.args...)
			r, err := run.Train(m, run.TrainOptions{Split: "ratio:0.3:0.3", Level: tc.level, Epsilon: tc.eps, Delta: 1e-5, Runs: 2, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := r.Metrics["test_acc"].Mean
			acc[tc.name] = got
			if got < tc.min {
				t.Errorf("%s test accuracy %.3f, want ≥ %.2f", tc.name, got, tc.min)
			}
			if tc.level == methods.Node {
				p := r.PrivacyReport
				if p == nil || p.Epsilon == nil || *p.Epsilon > tc.eps || *p.Epsilon < 0.9*tc.eps {
					t.Fatalf("privacy report %+v: ε must be ≤ %g and close to it", p, tc.eps)
				}
				if p.Noise["multiplier"] <= 0 {
					t.Fatalf("no noise in a private run: %+v", p.Noise)
				}
			}
		})
	}
	if acc["gcn"] < acc["mlp"]+0.1 {
		t.Errorf("GCN %.3f should clearly beat the feature-only MLP %.3f on a homophilous graph", acc["gcn"], acc["mlp"])
	}
}

func TestTrainRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts run.TrainOptions
		want string
	}{
		{"unknown dataset", run.TrainOptions{Dataset: "nope", Runs: 1}, "nope"},
		{"bad split", run.TrainOptions{Split: "ratio:0.9:0.5", Runs: 1}, "ratio"},
		{"zero runs", run.TrainOptions{Runs: 0}, "runs"},
		{"zero epsilon", run.TrainOptions{Level: methods.Node, Epsilon: 0, Runs: 1}, "epsilon"},
		{"level unsupported", run.TrainOptions{Level: methods.Edge, Epsilon: 1, Runs: 1}, "does not support"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMethod(t, "gcn", "--epochs", "1")
			if tc.name == "zero epsilon" {
				m = newMethod(t, "mlp", "--epochs", "1")
			}
			_, err := run.Train(m, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// TestCheckQueryFeatureRange: a query's features must lie within the
// public range, as a dataset's must (a query row of +Inf or 1e308 turned a
// node's posterior and its neighbours' into NaN).
func TestCheckQueryFeatureRange(t *testing.T) {
	ok := &graphs.Features{N: 2, F: 2, Dense: []float64{1, 2, 3, 1e30}}
	if err := run.CheckQuery(ok, 2, 2); err != nil {
		t.Fatalf("in range: %v", err)
	}
	for _, v := range []float64{math.Inf(1), math.NaN(), 1e308, -2e30} {
		bad := &graphs.Features{N: 2, F: 2, Dense: []float64{1, 2, 3, v}}
		if err := run.CheckQuery(bad, 2, 2); err == nil || !strings.Contains(err.Error(), "public range") {
			t.Errorf("value %v: err = %v, want a refusal naming the range", v, err)
		}
	}
}
