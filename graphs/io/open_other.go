//go:build !unix

package graphs

import (
	"fmt"
	"os"
)

// openNoBlock opens path for reading after checking that it is a regular
// file (a system without O_NONBLOCK would otherwise wait on a named pipe).
func openNoBlock(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		return nil, fmt.Errorf("is %s, not a regular file", describeMode(st.Mode()))
	}
	return os.Open(path)
}
