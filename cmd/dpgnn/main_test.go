package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/methods"
	_ "github.com/dpgnn/dpgnn/methods/all"
)

// TestBinaryHasBuiltInMethods builds dpgnn as go build does and checks
// that `dpgnn train --help` names every built-in method (methods/all, as
// this test registers it) and that an unknown method is refused with exit
// status 1 and the one-line error: main is cli.Main with methods/all and
// nothing is lost in between. (The commands themselves are tested in
// package cli.)
func TestBinaryHasBuiltInMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "dpgnn")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "train", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("dpgnn train --help: %v\n%s", err, out)
	}
	for _, name := range methods.Names() {
		if !strings.Contains(string(out), "\n  "+name+" ") {
			t.Errorf("dpgnn train --help does not list %s:\n%s", name, out)
		}
	}
	c := exec.Command(bin, "train", "nosuchmethod")
	out, err = c.CombinedOutput()
	if c.ProcessState == nil || c.ProcessState.ExitCode() != 1 || !strings.HasPrefix(string(out), "dpgnn: ") || strings.Count(string(out), "\n") != 1 {
		t.Errorf("dpgnn train nosuchmethod: %v, output %q; want exit status 1 and one line", err, out)
	}
}
