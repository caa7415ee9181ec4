package graphio

import (
	"fmt"
	"os"
)

// openInput opens a loader's input file and returns it with its size. The
// file must be regular (after following links): a directory, a device, a
// socket or a named pipe is refused without blocking — opening a FIFO for
// reading would wait for a writer forever, and a loader reads its files
// twice (a first pass sizes what the second allocates), which a pipe
// cannot do. The error is the bare reason; callers add "load PATH: ".
func openInput(path string) (*os.File, int64, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if m := st.Mode(); !m.IsRegular() {
		f.Close()
		if m.IsDir() {
			return nil, 0, fmt.Errorf("is a directory, not a file")
		}
		return nil, 0, fmt.Errorf("is %s, not a regular file: dpgnn reads a dataset's files twice (once to size them), so copy it to a regular file first", describeMode(m))
	}
	return f, st.Size(), nil
}
