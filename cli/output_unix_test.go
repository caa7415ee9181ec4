//go:build unix

package cli

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTraceNamedPipe: --trace on a named pipe streams the lines through it
// (a reader gets them) and leaves the pipe in place.
func TestTraceNamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trace.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p) // blocks until the command opens the pipe
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if _, err := runCLI(t, "train", "mlp", "--epochs", "3", "--trace", p); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(<-got), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], `{"kind":"epoch","run":0,"epoch":3,`) {
		t.Errorf("the reader of the pipe got:\n%s", strings.Join(lines, "\n"))
	}
	if st, err := os.Lstat(p); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v, %v", st, err)
	}
}
