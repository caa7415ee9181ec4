package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dpgnn/dpgnn/graphs/io"
)

// The files of a sweep directory (--out DIR).
const (
	sweepResultsFile  = "results.jsonl"
	sweepTableFile    = "table.md"
	sweepPlotFile     = "accuracy_vs_epsilon.png"
	sweepManifestFile = "sweep.json"
)

// sweepOut is where a sweep keeps its records: --out DIR holds
// DIR/results.jsonl (one JSON record per run), and DIR/table.md,
// DIR/accuracy_vs_epsilon.png and DIR/sweep.json beside it; --out FILE.jsonl
// is the results file alone (the table goes only to stdout).
type sweepOut struct {
	flag    string // the --out value, for messages
	dir     string // "" for the file form
	results string
}

// parseSweepOut reads --out: a path ending in .jsonl is the results file,
// any other path a directory (created when the sweep starts).
func parseSweepOut(out string) (*sweepOut, error) {
	if strings.EqualFold(filepath.Ext(out), ".jsonl") {
		if st, err := os.Stat(out); err == nil && st.IsDir() {
			return nil, fmt.Errorf("--out %s: is a directory; a path ending in .jsonl names the results file", out)
		}
		return &sweepOut{flag: out, results: out}, nil
	}
	st, err := os.Stat(out)
	if err == nil && !st.IsDir() {
		return nil, fmt.Errorf("--out %s: not a directory (give a directory, or a .jsonl file for the records alone)", out)
	}
	if err == nil {
		if err := checkSweepDir(out); err != nil {
			return nil, fmt.Errorf("--out %s: %w", out, err)
		}
	}
	return &sweepOut{flag: out, dir: out, results: filepath.Join(out, sweepResultsFile)}, nil
}

// checkSweepDir checks that an existing --out directory is a sweep's, or
// holds none of the files a sweep writes, so that a sweep never replaces a
// table.md, accuracy_vs_epsilon.png or sweep.json it did not write: the
// directory must hold a results.jsonl or a sweep.json that reads as a
// sweep's grid (both written before any run trains), or none of those
// three files. Other files (Slurm's task logs, notes) do not matter.
func checkSweepDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, sweepResultsFile)); err == nil {
		return nil
	}
	if m, ok, err := readManifest(dir); err == nil && ok && len(m.Methods) > 0 && len(m.Epsilons) > 0 && m.Runs > 0 {
		return nil
	}
	for _, name := range []string{sweepTableFile, sweepPlotFile, sweepManifestFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("holds %s but no %s, so it is not a sweep's directory and the sweep would replace %s: give a new or empty directory, or move %s away",
				name, sweepResultsFile, name, name)
		}
	}
	return nil
}

// readResults returns the records of a results file, in file order (none
// when it does not exist), read under a shared lock so that no append is
// half seen. A last line without its newline is what a sweep killed while
// appending leaves: it is dropped with a warning (the run it held trains
// again), and the next append cuts it off. Blank lines are skipped; any
// other line that is not a record is an error naming it.
func readResults(file string, warn io.Writer) ([]*sweepRecord, error) {
	recs, _, err := readResultsFrom(file, warn)
	return recs, err
}

// resultsPos is a place in a results file: the bytes read, up to the end
// of the last whole line, and the lines they hold.
type resultsPos struct {
	off   int64
	lines int
}

// readResultsFrom is readResults that also returns how far it read, so a
// running sweep can read later what other sweeps append (resultsFile.readNew).
func readResultsFrom(file string, warn io.Writer) ([]*sweepRecord, resultsPos, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, resultsPos{}, nil
	}
	if err != nil {
		return nil, resultsPos{}, err
	}
	defer f.Close()
	unlock, err := lockFile(f, false)
	if err != nil {
		return nil, resultsPos{}, fmt.Errorf("%s: %w", file, err)
	}
	b, err := io.ReadAll(f)
	unlock()
	if err != nil {
		return nil, resultsPos{}, fmt.Errorf("%s: %w", file, err)
	}
	return parseResults(b, file, warn, resultsPos{})
}

// parseResults parses the bytes of a results file that start at pos (see
// readResults) and returns where the whole lines among them end.
func parseResults(b []byte, file string, warn io.Writer, pos resultsPos) ([]*sweepRecord, resultsPos, error) {
	if i := bytes.LastIndexByte(b, '\n'); i+1 < len(b) {
		if len(bytes.TrimSpace(b[i+1:])) > 0 && warn != nil {
			fmt.Fprintf(warn, "dpgnn: warning: %s line %d is cut short (%d bytes without a newline, left by a sweep killed while writing): dropped; its run trains again\n",
				file, pos.lines+bytes.Count(b, []byte("\n"))+1, len(b)-i-1)
		}
		b = b[:i+1]
	}
	var out []*sweepRecord
	lines := bytes.Split(b, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline: nothing
	for n, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		r, err := parseRecord(line, fmt.Sprintf("%s line %d", file, pos.lines+n+1))
		if err != nil {
			return nil, pos, err
		}
		out = append(out, r)
	}
	return out, resultsPos{off: pos.off + int64(len(b)), lines: pos.lines + len(lines)}, nil
}

// resultsFile appends records to a results file, one whole line per
// record, safely against the other goroutines of the sweep (a mutex) and
// against other processes appending to the same file (shards, on this
// machine or on others sharing the file system): every append holds an
// exclusive lock on the file (flock), writes the line with one write to a
// file opened with O_APPEND, and syncs it to disk before the lock is
// released. Readers take a shared lock (readResults), so they never see
// half a line. A line cut short by a killed writer is cut off by the next
// append, under the lock, before it writes.
type resultsFile struct {
	mu   sync.Mutex
	f    *os.File
	name string
	warn io.Writer
	// read is how far readNew has read.
	read resultsPos
}

// openResults opens a results file for appending; a file it creates has
// its directory entry synced too, so a record synced later cannot be lost
// with the file.
func openResults(file string, warn io.Writer) (*resultsFile, error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(file, os.O_RDWR|os.O_APPEND, 0o644)
	} else if err == nil {
		if d, derr := os.Open(filepath.Dir(file)); derr == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	return &resultsFile{f: f, name: file, warn: warn}, nil
}

func (r *resultsFile) Close() error { return r.f.Close() }

// readNew returns the records appended since r.read (set it to where the
// sweep's first read ended), under a shared lock, and moves r.read past
// them; a line still without its newline (a writer killed mid-line) is
// left for later, as the next append cuts it off.
func (r *resultsFile) readNew() ([]*sweepRecord, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := lockFile(r.f, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := r.f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < r.read.off {
		return nil, fmt.Errorf("%s shrank from %d to %d bytes while the sweep ran (was it replaced or edited?): rerun the sweep to read it again", r.name, r.read.off, st.Size())
	}
	b := make([]byte, st.Size()-r.read.off)
	if _, err := r.f.ReadAt(b, r.read.off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	recs, pos, err := parseResults(b, r.name, nil, r.read)
	if err != nil {
		return nil, err
	}
	r.read = pos
	return recs, nil
}

// append writes rec as one line and syncs it.
func (r *resultsFile) append(rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	unlock, err := lockFile(r.f, true)
	if err != nil {
		return err
	}
	defer unlock()
	if err := r.cutTornTail(); err != nil {
		return err
	}
	if _, err := r.f.Write(b); err != nil {
		return err
	}
	return r.f.Sync()
}

// cutTornTail truncates the file after its last newline when it does not
// end with one (a writer was killed mid-line). It runs under the exclusive
// lock, so the cut-off bytes belong to no live writer.
func (r *resultsFile) cutTornTail() error {
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	last := make([]byte, 1)
	if _, err := r.f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	// Find the last newline, reading backwards in chunks.
	end := size
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end > 0 {
		start := max(0, end-chunk)
		n, err := r.f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	fmt.Fprintf(r.warn, "dpgnn: warning: %s ends with %d bytes of a cut-short line (a sweep killed while writing): cut off before appending\n", r.name, size-end)
	if err := r.f.Truncate(end); err != nil {
		return err
	}
	return r.f.Sync()
}

// sweepManifest is DIR/sweep.json: the grid of the last sweep started on
// the directory, for the row order and run count of `sweep --from DIR`.
type sweepManifest struct {
	Methods  []string `json:"methods"`
	Epsilons []string `json:"epsilons"`
	Runs     int      `json:"runs"`
	Seed     uint64   `json:"seed"`
}

// writeManifest writes DIR/sweep.json atomically (shards of one sweep
// write the same bytes).
func writeManifest(dir string, m sweepManifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	file := filepath.Join(dir, sweepManifestFile)
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, append(b, '\n')) {
		return nil
	}
	if err := graphio.WriteFileAtomic(file, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// readManifest reads DIR/sweep.json; ok is false when there is none.
func readManifest(dir string) (m sweepManifest, ok bool, err error) {
	file := filepath.Join(dir, sweepManifestFile)
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: %v", file, err)
	}
	return m, true, nil
}

// writeTextAtomic replaces file with text.
func writeTextAtomic(file, text string) error {
	if err := graphio.WriteFileAtomic(file, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
