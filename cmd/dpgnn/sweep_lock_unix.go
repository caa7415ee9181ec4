//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// lockWarning is printed once when the file system has no locks.
var lockWarning sync.Once

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
		if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
			lockWarning.Do(func() {
				fmt.Fprintf(os.Stderr, "dpgnn: warning: %s: the file system offers no locks (%v); appending without one\n", f.Name(), err)
			})
			return func() {}, nil
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
}
