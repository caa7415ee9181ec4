//go:build unix

package graphio

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without waiting for a writer when it
// is a named pipe (O_NONBLOCK; a regular file reads as usual).
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
