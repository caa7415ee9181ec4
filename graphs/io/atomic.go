package graphio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxSymlinkHops bounds the symlinks OutputPath follows (as Linux does).
const maxSymlinkHops = 40

// OutputPath returns the file a write to path replaces, after checking that
// it can be replaced atomically:
//
//   - a path that does not exist yet is itself (its directory must exist);
//   - a regular file is itself;
//   - a symbolic link is followed, link by link (a relative link from the
//     link's directory), to its final target, which must be a regular file
//     or not exist yet — so writing through a link replaces the file it
//     points to and keeps the link;
//   - a directory, device, named pipe, socket or other non-regular file is
//     an error: renaming a new file over it would replace the device node
//     or fail, and writing into it in place is not atomic.
//
// Errors do not repeat path (callers wrap them with it, e.g. "save PATH:
// ...") but name the link target when they concern it.
func OutputPath(path string) (string, error) {
	if path == "" {
		return "", errors.New("no output path given")
	}
	p := path
	for hop := 0; ; hop++ {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, checkOutputDir(path, p)
		}
		if err != nil {
			return "", BareErr(err)
		}
		mode := st.Mode()
		switch {
		case mode.IsRegular():
			return p, nil
		case mode&fs.ModeSymlink != 0:
			if hop >= maxSymlinkHops {
				return "", fmt.Errorf("more than %d levels of symbolic links", maxSymlinkHops)
			}
			t, err := os.Readlink(p)
			if err != nil {
				return "", fmt.Errorf("reading link %s: %w", p, BareErr(err))
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(p), t)
			}
			p = t
		default:
			what := describeMode(mode)
			if p != path {
				return "", fmt.Errorf("links to %s, which is %s, not a regular file: the output must be a regular file or a path that does not exist yet", p, what)
			}
			return "", fmt.Errorf("is %s, not a regular file: the output must be a regular file or a path that does not exist yet", what)
		}
	}
}

// checkOutputDir checks that the directory of target (the new file that a
// write to path creates) exists.
func checkOutputDir(path, target string) error {
	dir := filepath.Dir(target)
	st, err := os.Stat(dir)
	via := ""
	if target != path {
		via = fmt.Sprintf(" (it links to %s)", target)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist%s", dir, via)
	case err != nil:
		return fmt.Errorf("directory %s: %w%s", dir, BareErr(err), via)
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory%s", dir, via)
	}
	return nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return fmt.Sprintf("a special file (mode %v)", m)
}

// checkedWriter turns a short write without an error into io.ErrShortWrite
// and counts the bytes written.
type checkedWriter struct {
	w io.Writer
	n int64
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// WriteFileAtomic replaces the file at path (see OutputPath: a symlink is
// written through to its target) with what write produces, atomically: the
// bytes go to a temporary file in the target's directory, which is synced,
// closed and renamed over the target only when write, every write call,
// the sync and the close all succeeded. On any error the temporary file is
// removed and the target is left as it was — never a partial or empty file.
// A replaced file keeps its permission bits; a new file gets mode 0644.
// Errors do not repeat path (callers wrap them with it) and name the link
// target when the write goes through a symlink.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	target, err := OutputPath(path)
	if err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if st, err := os.Stat(target); err == nil {
		perm = st.Mode().Perm()
	}
	via := ""
	if target != path {
		via = " (through the link to " + target + ")"
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot create a temporary file beside the output%s: %w", via, BareErr(err))
	}
	tmp := f.Name()
	fail := func(stage string, err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s failed%s: %w (nothing was written)", stage, via, BareErr(err))
	}
	if err := f.Chmod(perm); err != nil {
		return fail("chmod", err)
	}
	cw := &checkedWriter{w: f}
	if err := write(cw); err != nil {
		return fail("writing", err)
	}
	if err := f.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("close failed%s: %w (nothing was written)", via, BareErr(err))
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot move the written file into place%s: %w (nothing was written)", via, BareErr(err))
	}
	return nil
}

// BareErr strips the path of a file-system error (*fs.PathError,
// *os.LinkError), for errors about a temporary or lock file whose name
// would only confuse, or whose path the caller names already.
func BareErr(err error) error {
	switch e := err.(type) {
	case *fs.PathError:
		return e.Err
	case *os.LinkError:
		return e.Err
	}
	return err
}
