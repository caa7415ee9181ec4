package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
)

// The method of docs/extending.md, "A method the CLI can run", as the guide
// prints it (cli/docstest's TestExtendingGoBlocks holds the guide's block to this file),
// completed with the methods the guide elides. Its Run is the smallest
// honest one, the training set's most frequent label for every node, a
// non-private baseline: what the example shows is that the flags, the
// record's hyperparameters, sweep --set and the validation errors all come
// from the one Config struct (TestExtendingConfigExample).

// Config is the example's hyperparameters: the width (units) and Adam's
// learning rate.
type Config struct {
	Hidden int     `flag:"hidden" help:"hidden width"`
	LR     float64 `flag:"lr" help:"Adam learning rate"`
}

// DefaultConfig is the example's defaults.
func DefaultConfig() Config { return Config{Hidden: 64, LR: 0.01} }

func (c *Config) Validate() error { // "Hidden (--hidden) must be in [1, 65536], got 0"
	return methods.CheckFields(c, methods.Width(&c.Hidden), methods.PositiveF(&c.LR))
}

// Model is the example's method (registered as configtoy).
type Model struct{ cfg Config }

func (m *Model) Config() any     { return &m.cfg }
func (m *Model) Validate() error { return m.cfg.Validate() }

// ... Name, Short, Levels, DefaultSplit, Epochs, Run

func (*Model) Name() string               { return "configtoy" }
func (*Model) Short() string              { return "the extending guide's config example (a test)" }
func (*Model) Levels() []methods.Level    { return []methods.Level{methods.None, methods.Edge} }
func (*Model) DefaultSplit(string) string { return "ratio:0.5:0.2" }
func (*Model) Epochs() int                { return 1 }

// Run predicts the most frequent training label for every node; it reads
// no edge, so at edge level it releases nothing an edge changes (ε = 0).
func (*Model) Run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	counts := make([]int, g.NumClasses)
	for _, v := range g.Split.Train {
		counts[g.Labels[v]]++
	}
	best := 0
	for c, n := range counts {
		if n > counts[best] {
			best = c
		}
	}
	pred := make([]int, g.N)
	for v := range pred {
		pred[v] = best
	}
	out := &methods.Outcome{Pred: pred, ValAcc: math.NaN()}
	if ctx.Level == methods.Edge {
		rep, err := mrun.Report(ctx, &dp.Plan{Level: "edge", Accountant: "none", Epsilon: ctx.Epsilon,
			Notes: []string{"the most frequent training label reads no edge: ε = 0 at edge level"}})
		if err != nil {
			return nil, err
		}
		out.Privacy = rep
	}
	return out, nil
}

func init() { methods.Register(func() methods.Method { return &Model{cfg: DefaultConfig()} }) }

// TestExtendingConfigExample: what docs/extending.md says of the Config
// struct holds for its example: `train --help` lists each field as a flag
// with its help and its default, the record's hyperparameters hold the
// fields by flag name, a run at edge level reports ε = 0, and an invalid
// value is refused by train and by sweep --set with the error the guide's
// comment shows.
func TestExtendingConfigExample(t *testing.T) {
	help, err := runCLI(t, "train", "configtoy", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--hidden int", "hidden width (default 64)", "--lr float", "Adam learning rate (default 0.01)"} {
		if !strings.Contains(help, want) {
			t.Errorf("train configtoy --help lacks %q:\n%s", want, help)
		}
	}
	out, err := runCLI(t, "train", "configtoy", "--hidden", "16", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Hyperparameters map[string]any `json:"hyperparameters"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if h := r.Hyperparameters; h["hidden"] != 16.0 || h["lr"] != 0.01 {
		t.Errorf("hyperparameters %v, want hidden 16 and lr 0.01", h)
	}
	out, err = runCLI(t, "train", "configtoy", "--privacy", "edge", "--epsilon", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Report *struct {
			Epsilon float64 `json:"epsilon"`
		} `json:"privacy_report"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.Report == nil || e.Report.Epsilon != 0 {
		t.Errorf("edge level: privacy report %+v (%v), want ε = 0", e.Report, err)
	}
	const msg = "Hidden (--hidden) must be in [1, 65536], got 0"
	if _, err := runCLI(t, "train", "configtoy", "--hidden", "0"); err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("train --hidden 0: err %v, want %q", err, msg)
	}
	_, err = runCLI(t, "sweep", "--methods", "configtoy", "--privacy", "edge", "--epsilons", "1", "--runs", "1",
		"--set", "configtoy:hidden=0", "--out", filepath.Join(t.TempDir(), "s"))
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("sweep --set configtoy:hidden=0: err %v, want %q", err, msg)
	}
}
