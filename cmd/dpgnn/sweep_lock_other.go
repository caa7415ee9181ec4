//go:build !unix

package main

import "os"

// lockFile is a no-op where flock(2) does not exist: appends rely on
// O_APPEND alone.
func lockFile(*os.File, bool) (func(), error) { return func() {}, nil }
