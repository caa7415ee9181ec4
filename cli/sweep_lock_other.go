//go:build !unix

package cli

import "os"

// lockFile is a no-op where flock(2) does not exist: appends rely on
// O_APPEND alone.
func lockFile(*os.File, bool) (func(), error) { return func() {}, nil }

// tryLockFile always succeeds where flock(2) does not exist: runs are not
// claimed there, and concurrent sweeps on one --out may train the same
// runs (shards, which never share a run, are unaffected).
func tryLockFile(*os.File) (bool, func(), error) { return true, func() {}, nil }
