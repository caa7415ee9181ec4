//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// lockWarning is printed once when the file system has no locks.
var lockWarning sync.Once

// noLocks reports the errors of a file system that offers no flock(2).
func noLocks(err error) bool {
	return errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS)
}

// warnNoLocks says once that f's file system has no locks.
func warnNoLocks(f *os.File, err error) {
	lockWarning.Do(func() {
		fmt.Fprintf(os.Stderr, "dpgnn: warning: %s: the file system offers no locks (%v); appending without one, and concurrent sweeps on this --out may train the same runs\n", f.Name(), err)
	})
}

// lockFile takes a lock on f (exclusive or shared) with flock(2), waiting
// for it, and returns the function that releases it. Where the file system
// offers no locks (ENOLCK, ENOTSUP), it warns once and goes on unlocked:
// appends then rely on O_APPEND alone, which keeps whole lines from
// interleaving on a local file system but not across NFS clients.
func lockFile(f *os.File, exclusive bool) (func(), error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, how)
		if err == nil {
			return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if noLocks(err) {
			warnNoLocks(f, err)
			return func() {}, nil
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
}

// tryLockFile takes an exclusive lock on f without waiting: ok is false
// when another open file (another process, or another open of the same
// file in this one) holds a lock on it. The kernel releases the lock when
// the holder closes the file or dies, so a lock never outlives its
// process. Where the file system offers no locks, it warns once and
// reports the lock taken.
func tryLockFile(f *os.File) (ok bool, unlock func(), err error) {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil, nil
		case noLocks(err):
			warnNoLocks(f, err)
			return true, func() {}, nil
		}
		return false, nil, fmt.Errorf("lock: %w", err)
	}
}
