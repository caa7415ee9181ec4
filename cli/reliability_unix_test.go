//go:build unix

package cli

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReliabilityNamedPipe (issue 40, item 11): --dataset naming a FIFO,
// or a dataset directory one of whose files is a FIFO, blocked forever in
// open. Each is now refused at once, in one line naming the file, with
// nothing on stdout.
func TestReliabilityNamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := func(p string) string {
		t.Helper()
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		return p
	}
	npz := fifo(filepath.Join(dir, "pipe.npz"))
	geom := relWriteFiles(t, filepath.Join(dir, "geom"), map[string]string{
		"out1_node_feature_label.txt": "node_id\tfeature\tlabel\n0\t0\t0\n1\t1\t1\n",
	})
	geomEdges := fifo(filepath.Join(geom, "out1_graph_edges.txt"))
	signed := filepath.Join(dir, "signed", "toy")
	relWriteFiles(t, signed, map[string]string{"whole_edge.txt": "1 2 1\n2 3 -1\n"})
	signedTrain := fifo(filepath.Join(signed, "toy.train"))
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"data info on a FIFO", []string{"data", "info", npz}, []string{npz, "is a named pipe, not a regular file", "copy it to a regular file"}},
		{"train on a FIFO", []string{"train", "gcn", "--dataset", npz}, []string{npz, "is a named pipe"}},
		{"geom-gcn edge file a FIFO", []string{"data", "info", geom}, []string{geomEdges, "is a named pipe"}},
		{"signed train file a FIFO", []string{"data", "info", signed}, []string{signedTrain, "is a named pipe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				out string
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, _, err := runCLIStreams(t, tc.args...)
				done <- result{out, err}
			}()
			select {
			case r := <-done:
				wantCLIErr(t, r.err, tc.want...)
				if exitStatus(r.err) != 1 {
					t.Errorf("exit status %d, want 1", exitStatus(r.err))
				}
				if r.out != "" {
					t.Errorf("stdout: %q", r.out)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("still waiting on the pipe after 20 s")
			}
		})
	}
}
