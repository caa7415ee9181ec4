package cli

import (
	"bytes"
	"encoding/json"
	"hash"
	"os"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	"gorgonia.org/tensor"

	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// TestInspectEveryMethod: text and DOT work for every registered method
// that can be built for inspection, and gradient checks pass.
func TestInspectEveryMethod(t *testing.T) {
	for _, name := range methods.Names() {
		m, _ := methods.New(name)
		if _, ok := m.(mrun.Builder); !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var data []string
			if _, ok := mrun.TaskOf(m).(mrun.SignedLink); ok {
				data = []string{"--dataset", "bitcoin_alpha", "--data-dir", testutil.DataDir(t)}
			}
			for _, format := range []string{"text", "dot"} {
				out, err := runCLI(t, append([]string{"inspect", name, "--format", format}, data...)...)
				if err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				if format == "dot" && !strings.HasPrefix(out, "digraph") {
					t.Fatalf("dot output does not start a digraph:\n%.200s", out)
				}
				if format == "text" && !strings.Contains(out, "grad") {
					t.Fatalf("text listing shows no gradient nodes:\n%.300s", out)
				}
			}
			if _, err := runCLI(t, "inspect", name, "--grad-check", "--grad-entries", "20"); err != nil {
				t.Fatalf("grad-check: %v", err)
			}
		})
	}
}

// TestInspectShowsDPNodes: the privacy nodes of DP-MLP (DP-SGD), ProGAP
// (NAP noise) and GCON (objective perturbation) are visible and labelled.
func TestInspectShowsDPNodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"inspect", "mlp", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5"},
			[]string{"GaussianNoise", "ClipFactor", "GhostNormSq", "clipped-sum", "noisy-grad", "DP:"}},
		{[]string{"inspect", "progap", "--privacy", "edge", "--epsilon", "1"},
			[]string{"GaussianNoise(progap.nap", "DP: noise", "SpMM(progap.nap"}},
		{[]string{"inspect", "progap", "--privacy", "node", "--epsilon", "8", "--delta", "1e-5"},
			[]string{"GaussianNoise(progap.nap", "ClipFactor", "clipped-sum"}},
		{[]string{"inspect", "gap", "--privacy", "edge", "--epsilon", "1"},
			[]string{"GaussianNoise(gap.nap", "DP: noise"}},
		{[]string{"inspect", "gcon", "--privacy", "edge", "--epsilon", "1"},
			[]string{"objective-perturbation", "(1/n1)⟨B,Θ⟩"}},
		{[]string{"inspect", "asgl", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--degree-bound", "cap",
			"--dataset", "bitcoin_alpha", "--data-dir", ""},
			[]string{"GaussianNoise(asgl.disc.E", "ClipFactor", "clipped-sum", "asgl.disc.E.probe"}},
	} {
		t.Run(strings.Join(tc.args[1:4], " "), func(t *testing.T) {
			for i, a := range tc.args {
				if a == "--data-dir" {
					tc.args[i+1] = testutil.DataDir(t)
				}
			}
			out, err := runCLI(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("listing lacks %q", w)
				}
			}
		})
	}
}

// squareWrong computes x² elementwise but claims the derivative is 3x.
type squareWrong struct{}

func (squareWrong) Arity() int { return 1 }
func (squareWrong) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (squareWrong) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (squareWrong) Do(v ...G.Value) (G.Value, error) {
	x := v[0].(*tensor.Dense)
	d := x.Data().([]float64)
	out := make([]float64, len(d))
	for i, e := range d {
		out[i] = e * e
	}
	return tensor.New(tensor.WithShape(x.Shape().Clone()...), tensor.WithBacking(out)), nil
}
func (squareWrong) ReturnsPtr() bool      { return false }
func (squareWrong) CallsExtern() bool     { return false }
func (squareWrong) OverwritesInput() int  { return -1 }
func (squareWrong) WriteHash(h hash.Hash) { h.Write([]byte("squareWrong")) }
func (squareWrong) Hashcode() uint32      { return 7 }
func (squareWrong) String() string        { return "squareWrong" }
func (squareWrong) DiffWRT(int) []bool    { return []bool{true} }
func (squareWrong) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	d, err := G.HadamardProd(grad, G.Must(G.Mul(in[0], G.NewConstant(3.0))))
	return G.Nodes{d}, err
}

func brokenModel(t *testing.T) *nn.Model {
	t.Helper()
	m := nn.NewModel(1)
	x := m.Input("x", []float64{1, 2, 3, 4, 5, 6}, 3, 2)
	w := m.NewParam("w", nn.GlorotUniform(), 2, 2)
	y := G.Must(G.ApplyOp(squareWrong{}, G.Must(G.Mul(x, w.Node))))
	loss := G.Must(G.Sum(y))
	if err := m.Compile(loss, []*G.Node{y}); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGradCheckReportFailsOnBrokenGradient(t *testing.T) {
	m := nn.NewModel(1)
	x := m.Input("x", []float64{1, 2, 3, 4, 5, 6}, 3, 2)
	w := m.NewParam("w", nn.GlorotUniform(), 2, 2)
	y := G.Must(G.Mul(x, w.Node))
	loss := G.Must(G.Sum(G.Must(G.Square(y))))
	if err := m.Compile(loss, []*G.Node{y}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	bad, err := gradCheckReport(&buf, "dense", m, gradCheckOptions{Tol: 1e-6, Step: 1e-4})
	if err != nil || len(bad) != 0 {
		t.Fatalf("correct gradient flagged: %v %v\n%s", err, bad, buf.String())
	}
	// Now a model with an op whose SymDiff is wrong.
	bm := brokenModel(t)
	buf.Reset()
	bad, err = gradCheckReport(&buf, "dense", bm, gradCheckOptions{Tol: 1e-6, Step: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) == 0 || !strings.Contains(buf.String(), "FAIL") {
		t.Fatalf("a wrong gradient passed:\n%s", buf.String())
	}
}

// TestTraceHasDPSGDDiagnostics: --trace writes one JSON line per DP-SGD
// step with per-parameter gradient norms, the clipped fraction and the
// noise norm, plus one line per epoch.
func TestTraceHasDPSGDDiagnostics(t *testing.T) {
	path := t.TempDir() + "/trace.jsonl"
	if _, err := runCLI(t, "train", "mlp", "--privacy", "node", "--epsilon", "2", "--delta", "1e-5", "--epochs", "1",
		"--batch-size", "200", "--clip", "0.01", "--trace", path, "--json"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	steps, epochs := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Kind        string             `json:"kind"`
			GradNorms   map[string]float64 `json:"grad_norms"`
			ClippedFrac float64            `json:"clipped_frac"`
			NoiseNorm   float64            `json:"noise_norm"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad trace line %q: %v", line, err)
		}
		switch r.Kind {
		case "step":
			steps++
			if r.NoiseNorm <= 0 || len(r.GradNorms) == 0 || r.ClippedFrac <= 0 {
				t.Fatalf("step line lacks diagnostics: %s", line)
			}
		case "epoch":
			epochs++
		}
	}
	if steps == 0 || epochs != 1 {
		t.Fatalf("%d step lines and %d epoch lines", steps, epochs)
	}
}
