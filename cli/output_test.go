package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirNames lists a directory's entries (to catch temporary files left
// behind).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestStreamFileRegular: a regular file is replaced only by Commit;
// Abort leaves the old content; neither leaves a temporary file.
func TestStreamFileRegular(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := createStream(p)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("partial\n"))
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("the target changed while streaming: %q", b)
	}
	s.Abort()
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("after Abort: %q, want the old content", b)
	}
	if n := dirNames(t, dir); len(n) != 1 {
		t.Errorf("files after Abort: %v", n)
	}

	s, err = createStream(p)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("line 1\n"))
	s.Write([]byte("line 2\n"))
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("late\n")); err == nil {
		t.Error("a write after Commit succeeded")
	}
	s.Abort() // after Commit: nothing
	st, err := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "line 1\nline 2\n" || err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("after Commit: %q, %v (mode %v, want the old file's 0600)", b, err, st.Mode().Perm())
	}
	if n := dirNames(t, dir); len(n) != 1 {
		t.Errorf("files after Commit: %v", n)
	}

	// A new file in a directory that does not exist is refused at once.
	if _, err := createStream(filepath.Join(dir, "nosuch", "t.jsonl")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing directory: %v", err)
	}
}

// TestStreamFileDevice: a device is written through, not replaced.
func TestStreamFileDevice(t *testing.T) {
	s, err := createStream(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Write([]byte("line\n")); n != 5 || err != nil {
		t.Fatalf("write through: %d, %v", n, err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v, %v", os.DevNull, st, err)
	}
}

// TestTraceFile: `train --trace` replaces a regular file when the run
// succeeds and leaves it as it was when the run fails after tracing, and
// writes a device through.
func TestTraceFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "trace.jsonl")
	os.WriteFile(p, []byte("old\n"), 0o644)
	armStopHook(t, 0, 2) // the second run fails, after tracing its epochs
	_, err := runCLI(t, "train", "stopmlp", "--epochs", "3", "--runs", "2", "--trace", p)
	if err == nil || !strings.Contains(err.Error(), "failing as the test asked") {
		t.Fatalf("error %v, want the second run's failure", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("a failed run changed --trace: %q", b)
	}
	if n := dirNames(t, dir); len(n) != 1 {
		t.Errorf("files after the failed run: %v", n)
	}

	if _, err := runCLI(t, "train", "mlp", "--epochs", "3", "--trace", p); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], `{"kind":"epoch"`) {
		t.Errorf("trace of a 3-epoch run:\n%s", b)
	}
	if n := dirNames(t, dir); len(n) != 1 {
		t.Errorf("files after the run: %v", n)
	}

	if _, err := runCLI(t, "train", "mlp", "--epochs", "3", "--trace", os.DevNull); err != nil {
		t.Fatalf("--trace %s: %v", os.DevNull, err)
	}
	for _, bad := range []string{dir, filepath.Join(dir, "nosuch", "t.jsonl")} {
		_, err := runCLI(t, "train", "mlp", "--epochs", "3", "--trace", bad)
		wantCLIErr(t, err, "--trace "+bad+": ")
	}
}

// TestCPUProfileFile: the profile replaces its file when it stops (and
// not when it is discarded), leaves no temporary file, and a path that
// cannot be replaced atomically is refused before anything runs.
func TestCPUProfileFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpu.prof")
	os.WriteFile(p, []byte("old"), 0o644)
	prof, err := startCPUProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("the profile was written before it stopped: %q", b)
	}
	if err := prof.stop(true); err != nil {
		t.Fatal(err)
	}
	if err := prof.stop(true); err != nil { // a second stop does nothing
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("profile is not a gzipped pprof file: %.20q", b)
	}
	if n := dirNames(t, dir); len(n) != 1 {
		t.Errorf("files after the profile: %v", n)
	}
	for _, bad := range []string{"/dev/full", dir, filepath.Join(dir, "nosuch", "cpu.prof")} {
		_, err := startCPUProfile(bad)
		wantCLIErr(t, err, cpuProfileEnv+"="+bad+": ")
	}
	if st, err := os.Stat("/dev/full"); err == nil && st.Mode()&fs.ModeCharDevice == 0 {
		t.Error("/dev/full was replaced")
	}
	if prof, err := startCPUProfile(""); prof != nil || err != nil || prof.stop(true) != nil {
		t.Errorf("no path: %v, %v", prof, err)
	}

	// A failed command's profile is discarded.
	prof, err = startCPUProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	if err := prof.stop(false); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Error("a discarded profile replaced the file")
	}
	if n := dirNames(t, dir); len(n) != 1 {
		t.Errorf("files after the discarded profile: %v", n)
	}
}

// DPGNN_OPTIMES: the table of a command's ops is written when it stops
// well (a header, then a row per op, longest first), not when it fails;
// a path that cannot take the file is refused up front.
func TestOpTimesFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ops.tsv")
	times, err := startOpTimes(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "train", "gcn", "--epochs", "3"); err != nil {
		t.Fatal(err)
	}
	if err := times.stop(true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "# wall time per op") || lines[1] != "seconds\tcalls\tus_per_call\top" {
		t.Fatalf("table:\n%s", b)
	}
	var product bool
	for _, l := range lines[2:] {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			t.Fatalf("row %q", l)
		}
		product = product || strings.HasPrefix(f[3], "SpMM(Â")
	}
	if !product {
		t.Errorf("no row for the GCN's sparse product:\n%s", b)
	}
	for _, bad := range []string{dir, filepath.Join(dir, "nosuch", "ops.tsv")} {
		_, err := startOpTimes(bad)
		wantCLIErr(t, err, opTimesEnv+"="+bad+": ")
	}
	if times, err := startOpTimes(""); times != nil || err != nil || times.stop(true) != nil {
		t.Errorf("no path: %v, %v", times, err)
	}
	times, err = startOpTimes(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := times.stop(false); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(b, after) {
		t.Error("a failed command's table replaced the file")
	}
}

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("no space left on device")
	}
	f.after--
	return len(p), nil
}

// A lost write to standard output fails the command (main turns the
// remembered error into exit status 1).
func TestCheckedWriterRemembersFirstError(t *testing.T) {
	c := &checkedWriter{w: &failingWriter{after: 1}, name: "standard output"}
	if _, err := fmt.Fprintln(c, "first"); err != nil || c.err != nil {
		t.Fatalf("first write: %v, remembered %v", err, c.err)
	}
	fmt.Fprintln(c, "second")
	fmt.Fprintln(c, "third")
	if c.err == nil || !strings.Contains(c.err.Error(), "writing to standard output: no space left") || exitStatus(c.err) != 1 {
		t.Fatalf("remembered %v", c.err)
	}
}
