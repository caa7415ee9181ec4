package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/nn"
)

// streamFile is an output written while a command runs (--trace). A
// regular file, or a path that does not exist yet, is written to a
// temporary file beside it, created when the stream opens (so a directory
// that takes no new file is refused before any work), and renamed over it
// when the command ends (so a failed command, or a trace whose writes
// failed, leaves the old file as it was; the file keeps its permission
// bits). Anything else (a device such as /dev/stdout, a named pipe) is
// written through as the command runs. Writes are whole: Commit, Abort
// and Finish wait for a write in progress, and later writes fail with
// os.ErrClosed.
type streamFile struct {
	mu     sync.Mutex
	f      *os.File // the temporary file, or the file written through
	closed bool
	// tmp and target are the temporary file and the file it replaces (""
	// when written through).
	tmp, target string
}

// createStream opens path for streaming as streamFile describes; an
// existing regular file that cannot be written (its permission bits, a
// read-only file system) is refused, as a write in place would be. Errors
// do not repeat path (callers wrap them with the flag and path).
func createStream(path string) (*streamFile, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, graphio.BareErr(err)
		}
		return &streamFile{f: f}, nil
	}
	target, err := graphio.OutputPath(path)
	if err != nil {
		return nil, err
	}
	perm := fs.FileMode(0o644)
	if st, err := os.Stat(target); err == nil {
		perm = st.Mode().Perm()
		f, err := os.OpenFile(target, os.O_WRONLY, 0) // no O_TRUNC: a probe, nothing changes
		if err != nil {
			return nil, fmt.Errorf("cannot be written: %w", graphio.BareErr(err))
		}
		f.Close()
	}
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("cannot create a file in %s: %w", dir, graphio.BareErr(err))
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("chmod: %w", graphio.BareErr(err))
	}
	return &streamFile{f: f, tmp: f.Name(), target: target}, nil
}

func (s *streamFile) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, os.ErrClosed
	}
	n, err := s.f.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, graphio.BareErr(err)
}

// close stops further writes and reports whether the file was still open.
func (s *streamFile) close() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := !s.closed
	s.closed = true
	return was
}

// Commit ends the output: the temporary file replaces the target, or the
// file written through is closed.
func (s *streamFile) Commit() error {
	if !s.close() {
		return nil
	}
	return s.commit()
}

func (s *streamFile) commit() error {
	if s.tmp == "" {
		return graphio.BareErr(s.f.Close())
	}
	fail := func(stage string, err error) error {
		s.f.Close()
		os.Remove(s.tmp)
		return fmt.Errorf("%s failed: %w", stage, graphio.BareErr(err))
	}
	if err := s.f.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := s.f.Close(); err != nil {
		os.Remove(s.tmp)
		return fmt.Errorf("close failed: %w", graphio.BareErr(err))
	}
	if err := os.Rename(s.tmp, s.target); err != nil {
		os.Remove(s.tmp)
		return fmt.Errorf("cannot move the written file into place: %w", graphio.BareErr(err))
	}
	return nil
}

// Abort ends the output without replacing the target (a file written
// through keeps what it received).
func (s *streamFile) Abort() {
	if !s.close() {
		return
	}
	s.discard()
}

func (s *streamFile) discard() {
	s.f.Close()
	if s.tmp != "" {
		os.Remove(s.tmp)
	}
}

// Finish ends the output of a command that did its work (or was
// interrupted and keeps what it did): writes stop, then writeErr, the
// first error of the writes (trainers.Trace.Err), decides — none: Commit;
// one: the target is left as it was (a file written through keeps what
// it received) and the error is returned. A write refused because the
// stream had ended (os.ErrClosed: a run abandoned at an interruption,
// reporting late) is no error. The error says what became of the output;
// the caller names the flag and path.
func (s *streamFile) Finish(writeErr func() error) error {
	if !s.close() {
		return nil
	}
	if err := writeErr(); err != nil && !errors.Is(err, os.ErrClosed) {
		s.discard()
		if s.tmp != "" {
			return fmt.Errorf("writing failed: %w; the file was left as it was", graphio.BareErr(err))
		}
		return fmt.Errorf("writing failed: %w; it got the lines before the failure", graphio.BareErr(err))
	}
	if err := s.commit(); err != nil {
		if s.tmp != "" {
			return fmt.Errorf("%w; the file was left as it was", err)
		}
		return err
	}
	return nil
}

// openTrace opens the --trace output for a command that prints on stdout
// (its results; with jsonOut one JSON object and nothing else). Refused
// before any work, with a one-line error naming the flag: a path
// createStream refuses, and the file stdout writes to — with --json, since
// trace lines there break the one-object promise (e.g. --trace
// /dev/stdout), and without, when it is a regular file, which the trace
// would replace under stdout.
func openTrace(path string, jsonOut bool, stdout io.Writer) (*streamFile, error) {
	if f := fileOf(stdout); f != nil {
		a, err1 := os.Stat(path)
		b, err2 := f.Stat()
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			if jsonOut {
				return nil, fmt.Errorf("--trace %s with --json: the trace would go to standard output, which --json keeps to one JSON object; write the trace to a file", path)
			}
			if a.Mode().IsRegular() {
				return nil, fmt.Errorf("--trace %s is the file standard output writes to, and the trace would replace it; write the trace to another file", path)
			}
		}
	}
	s, err := createStream(path)
	if err != nil {
		return nil, fmt.Errorf("--trace %s: %w", path, err)
	}
	return s, nil
}

// fileOf is the file a command's stdout writes to (nil: none, e.g. a
// buffer in a test).
func fileOf(w io.Writer) *os.File {
	switch v := w.(type) {
	case *os.File:
		return v
	case *checkedWriter:
		return fileOf(v.w)
	}
	return nil
}

// cpuProfileEnv names the file a CPU profile of the whole command is
// written to.
const cpuProfileEnv = "DPGNN_CPUPROFILE"

// opTimesEnv names the file a table of the command's time per op (the
// expression graphs' ops and chains, nn.StartOpTimes) is written to.
const opTimesEnv = "DPGNN_OPTIMES"

// exitFile is a file a command writes when it ends (a CPU profile, an
// op-time table), named by an environment variable: its path is refused
// before the command runs when it cannot take a file, and the file is
// written atomically (graphs.WriteFileAtomic) when the command ends well
// or is interrupted, not when it fails, so an older file is replaced only
// by a complete one of a command that did its work.
type exitFile struct {
	env, path string
	once      sync.Once
	err       error
}

func newExitFile(env, path string) (*exitFile, error) {
	if _, err := graphio.OutputPath(path); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", env, path, err)
	}
	return &exitFile{env: env, path: path}, nil
}

// finish runs end once and, with write, writes what it returns; later
// calls return the first call's error.
func (f *exitFile) finish(write bool, end func() []byte) error {
	f.once.Do(func() {
		b := end()
		if !write {
			return
		}
		if err := graphio.WriteFileAtomic(f.path, func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		}); err != nil {
			f.err = fmt.Errorf("%s=%s: %w", f.env, f.path, err)
		}
	})
	return f.err
}

// cpuProfile is a CPU profile being recorded, in memory while the command
// runs (an exitFile).
type cpuProfile struct {
	*exitFile
	buf bytes.Buffer
}

// startCPUProfile starts profiling to path; an empty path profiles nothing
// (a nil *cpuProfile, whose stop does nothing). A path that cannot be
// replaced atomically (a directory, a device, a missing directory) is
// refused before the command runs.
func startCPUProfile(path string) (*cpuProfile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := newExitFile(cpuProfileEnv, path)
	if err != nil {
		return nil, err
	}
	p := &cpuProfile{exitFile: f}
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", cpuProfileEnv, path, err)
	}
	return p, nil
}

// stop ends the profile and, with write, writes it.
func (p *cpuProfile) stop(write bool) error {
	if p == nil {
		return nil
	}
	return p.finish(write, func() []byte {
		pprof.StopCPUProfile()
		return p.buf.Bytes()
	})
}

// opTimes is an op-time table being recorded (an exitFile).
type opTimes struct{ *exitFile }

// startOpTimes starts timing ops for path; an empty path times nothing (a
// nil *opTimes, whose stop does nothing).
func startOpTimes(path string) (*opTimes, error) {
	if path == "" {
		return nil, nil
	}
	f, err := newExitFile(opTimesEnv, path)
	if err != nil {
		return nil, err
	}
	nn.StartOpTimes()
	return &opTimes{f}, nil
}

// stop ends the timing and, with write, writes the table as tab-separated
// lines (seconds in all, calls, microseconds per call, op), longest first.
func (o *opTimes) stop(write bool) error {
	if o == nil {
		return nil
	}
	return o.finish(write, func() []byte {
		table := nn.StopOpTimes()
		var total time.Duration
		for _, r := range table {
			total += r.Total
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# wall time per op and chain of the expression graphs, %.3f s in all (ops of paths that run at once overlap)\n", total.Seconds())
		fmt.Fprintln(&b, "seconds\tcalls\tus_per_call\top")
		for _, r := range table {
			fmt.Fprintf(&b, "%.6f\t%d\t%.1f\t%s\n", r.Total.Seconds(), r.Calls, float64(r.Total.Nanoseconds())/1e3/float64(r.Calls), r.Op)
		}
		return b.Bytes()
	})
}
