package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
)

// streamFile is an output written while a command runs (--trace). A
// regular file, or a path that does not exist yet, is written to a
// temporary file beside it that Commit renames over it (through
// graphs.WriteFileAtomic), so a failed command leaves the old file as it
// was; anything else (a device such as /dev/stdout, a named pipe) is
// written through as the command runs. Writes are whole: Commit and Abort
// wait for a write in progress, and later writes fail.
type streamFile struct {
	mu     sync.Mutex
	w      io.Writer // the pipe to the atomic write, or the file written through
	closed bool
	// atomic: the pipe's writer and the result of WriteFileAtomic.
	pipe   *io.PipeWriter
	result chan error
	// through: the non-regular file written through.
	through *os.File
}

// errAborted ends the atomic write of a streamFile that Abort discards.
var errAborted = errors.New("output discarded")

// createStream opens path for streaming as streamFile describes. Errors do
// not repeat path (callers wrap them with the flag and path).
func createStream(path string) (*streamFile, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &streamFile{w: f, through: f}, nil
	}
	// Checked now, not when the command ends.
	if _, err := graphs.OutputPath(path); err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	s := &streamFile{w: pw, pipe: pw, result: make(chan error, 1)}
	go func() {
		err := graphs.WriteFileAtomic(path, func(w io.Writer) error {
			_, err := io.Copy(w, pr)
			return err
		})
		// Writes after the end fail rather than block.
		if err != nil {
			pr.CloseWithError(err)
		} else {
			pr.CloseWithError(io.ErrClosedPipe)
		}
		s.result <- err
	}()
	return s, nil
}

func (s *streamFile) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, os.ErrClosed
	}
	return s.w.Write(p)
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
	if s.through != nil {
		return s.through.Close()
	}
	s.pipe.Close()
	return <-s.result
}

// Abort ends the output without replacing the target (a file written
// through keeps what it received).
func (s *streamFile) Abort() {
	if !s.close() {
		return
	}
	if s.through != nil {
		s.through.Close()
		return
	}
	s.pipe.CloseWithError(errAborted)
	<-s.result
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
	if _, err := graphs.OutputPath(path); err != nil {
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
		if err := graphs.WriteFileAtomic(f.path, func(w io.Writer) error {
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
