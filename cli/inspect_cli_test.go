package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// TestInspectDPMarksOnlyPrivacyNodes: in DP-MLP's listing every privacy op
// is on a line marked "DP: …", gradient nodes are there too, and the
// non-private MLP has no DP node at all.
func TestInspectDPMarksOnlyPrivacyNodes(t *testing.T) {
	out, err := runCLI(t, "inspect", "mlp", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5")
	if err != nil {
		t.Fatal(err)
	}
	grads := 0
	for _, l := range strings.Split(out, "\n") {
		for _, op := range []string{"GaussianNoise", "ClipFactor", "GhostNormSq", "ExpandToRows", ".probe"} {
			if strings.Contains(l, op) && !strings.Contains(l, "DP: ") {
				t.Errorf("%s node not marked DP: %s", op, l)
			}
		}
		if strings.HasSuffix(l, " grad") {
			grads++
		}
	}
	if grads == 0 {
		t.Errorf("no gradient nodes in the DP-SGD graph:\n%s", out)
	}
	plain, err := runCLI(t, "inspect", "mlp")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "DP:") || strings.Contains(plain, "GaussianNoise") {
		t.Errorf("the non-private MLP has DP nodes:\n%s", plain)
	}
}

func TestInspectOutFileAndSVG(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gcn.dot")
	if out, err := runCLI(t, "inspect", "gcn", "--format", "dot", "--out", path); err != nil || out != "" {
		t.Fatalf("--out: %v, stdout %q", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("digraph ")) {
		t.Fatalf("--out file: %v %.40q", err, b)
	}
	if dot, err := exec.LookPath("dot"); err == nil {
		c := exec.Command(dot, "-Tsvg")
		c.Stdin = bytes.NewReader(b)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("Graphviz rejects the DOT output: %v\n%.300s", err, out)
		}
		svg, err := runCLI(t, "inspect", "gcn", "--format", "svg")
		if err != nil || !strings.Contains(svg, "<svg") {
			t.Fatalf("svg: %v %.200q", err, svg)
		}
	}
	t.Setenv("PATH", dir) // no dot program here
	_, err = runCLI(t, "inspect", "gcn", "--format", "svg")
	if err == nil || !strings.Contains(err.Error(), "apt-get install graphviz") {
		t.Fatalf("svg without dot: got %v, want advice to install Graphviz", err)
	}
}

func TestInspectBadInputs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect"}, "inspect needs a method"},
		{[]string{"inspect", "nosuch"}, "unknown"},
		{[]string{"inspect", "gcn", "--format", "png"}, "--format"},
		{[]string{"inspect", "gcn", "--privacy", "node", "--epsilon", "1"}, "does not support"},
		{[]string{"inspect", "mlp", "--privacy", "node", "--epsilon", "0"}, "epsilon"},
		{[]string{"inspect", "gcn", "--dataset", "nosuch"}, "nosuch"},
		{[]string{"inspect", "gcn", "--grad-check", "--tolerance", "0"}, "tolerance"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := runCLI(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// brokenMethod is an unregistered method whose model squares its hidden
// layer with squareWrong (the wrong derivative 3x for x²).
type brokenMethod struct{}

func (brokenMethod) Name() string               { return "broken" }
func (brokenMethod) Short() string              { return "a model with a wrong gradient" }
func (brokenMethod) Levels() []methods.Level    { return []methods.Level{methods.None} }
func (brokenMethod) DefaultSplit(string) string { return "ratio:0.5:0.25" }
func (brokenMethod) Config() any                { return nil }
func (brokenMethod) Validate() error            { return nil }
func (brokenMethod) Epochs() int                { return 1 }
func (brokenMethod) Run(*methods.Context) (*methods.Outcome, error) {
	return nil, fmt.Errorf("not trainable")
}
func (brokenMethod) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	g := ctx.Graph
	model := nn.NewModel(ctx.Seed)
	var ce *nn.CrossEntropy
	err := nn.Build(func() error {
		x, err := layers.NewFeatures(model, g.X, "X")
		if err != nil {
			return err
		}
		l1 := layers.NewLinear(model, "broken.0", g.X.F, 4, true, layers.InitGlorot)
		l2 := layers.NewLinear(model, "broken.1", 4, g.NumClasses, true, layers.InitGlorot)
		h := G.Must(G.ApplyOp(squareWrong{}, x.Linear(model, l1, 0)))
		if ce, err = nn.NewCrossEntropy(model, l2.Forward(h), "loss"); err != nil {
			return err
		}
		return model.Compile(ce.Mean, nil)
	})
	if err != nil {
		return nil, err
	}
	return model, ce.SetRows(g.Split.Train, g.Labels)
}

// TestGradCheckCommandFailsOnBrokenGradient: the --grad-check path returns
// an error (non-zero exit) that names the parameters below the broken op,
// for dense and sparse features, and reports the ones above it as ok.
func TestGradCheckCommandFailsOnBrokenGradient(t *testing.T) {
	var buf bytes.Buffer
	err := runGradCheck(&buf, brokenMethod{}, 1, gradCheckOptions{Tol: 1e-6, Step: 1e-4})
	if err == nil {
		t.Fatalf("a wrong gradient passed:\n%s", buf.String())
	}
	for _, want := range []string{"broken.0.W (dense)", "broken.0.b (dense)", "broken.0.W (sparse)", "broken.0.b (sparse)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "broken.1") {
		t.Errorf("error %q names a parameter above the broken op", err)
	}
	if n := strings.Count(buf.String(), "FAIL"); n != 4 {
		t.Errorf("%d FAIL lines, want 4:\n%s", n, buf.String())
	}
}

func TestMethodWithoutBuilder(t *testing.T) {
	type plain struct{ methods.Method } // hides BuildModel
	_, err := mrun.BuildModel(plain{brokenMethod{}}, &methods.Context{})
	if err == nil || !strings.Contains(err.Error(), "does not implement methods.Builder") {
		t.Fatalf("got %v", err)
	}
}
