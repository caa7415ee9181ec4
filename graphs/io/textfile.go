package graphio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/dpgnn/dpgnn/graphs"
)

// maxLineLen bounds the length of one line of a text dataset file, in
// bytes.
const maxLineLen = 16 << 20

// utf8BOM is the byte-order mark some editors write at the start of a
// UTF-8 file.
var utf8BOM = []byte("\xef\xbb\xbf")

// textStats is what a first pass over a text file finds: enough to size
// every buffer the second pass fills, so that the second pass allocates
// exactly what was reserved for it.
type textStats struct {
	lines   int // lines, the last one counted even without a final newline
	commas  int // ',' bytes in the whole file
	longest int // bytes in the longest line (without its newline)
}

// scanText makes the first pass over a text file (named name in errors):
// it counts lines and commas and measures the longest line. A file in
// UTF-16 or UTF-32 (by its byte-order mark) is refused, as is a line longer
// than maxLineLen; a UTF-8 byte-order mark is allowed (the line reader
// drops it). It reads through buf and allocates nothing else.
func scanText(r io.Reader, name string, buf []byte) (textStats, error) {
	var st textStats
	cur := 0 // bytes of the current line so far
	first := true
	for {
		k, err := r.Read(buf)
		c := buf[:k]
		if first && k > 0 {
			first = false
			if bytes.HasPrefix(c, []byte{0xff, 0xfe}) || bytes.HasPrefix(c, []byte{0xfe, 0xff}) || bytes.HasPrefix(c, []byte{0, 0, 0xfe, 0xff}) {
				return st, fmt.Errorf("%s: the file is UTF-16 or UTF-32 encoded (it starts with that byte-order mark): save it as UTF-8 or ASCII text", name)
			}
		}
		st.commas += bytes.Count(c, []byte{','})
		for len(c) > 0 {
			i := bytes.IndexByte(c, '\n')
			if i < 0 {
				cur += len(c)
				break
			}
			cur += i
			st.lines++
			st.longest = max(st.longest, cur)
			if cur > maxLineLen {
				return st, fmt.Errorf("%s:%d: line of %s is longer than the %s a line may have", name, st.lines, graphs.FormatBytes(float64(cur)), graphs.FormatBytes(maxLineLen))
			}
			cur = 0
			c = c[i+1:]
		}
		if cur > maxLineLen {
			return st, fmt.Errorf("%s:%d: line is longer than the %s a line may have", name, st.lines+1, graphs.FormatBytes(maxLineLen))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, fmt.Errorf("%s: %w", name, err)
		}
	}
	if cur > 0 {
		st.lines++
		st.longest = max(st.longest, cur)
	}
	return st, nil
}

// lineBufferBytes is what a lineReader for a file with st allocates: its
// line buffer, one line and its newline long (at least 4 kB).
func lineBufferBytes(st textStats) float64 { return float64(max(st.longest+2, 4096)) }

// lineReader yields the lines of a text file with their 1-based numbers,
// trailing "\r" and a leading UTF-8 byte-order mark removed.
type lineReader struct {
	sc     *bufio.Scanner
	prefix string // error prefix, e.g. "load "
	name   string
	line   int
}

// newLineReader reads r; st (from scanText, or the zero value when r is
// read once) sizes its buffer.
func newLineReader(r io.Reader, prefix, name string, st textStats) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, int(lineBufferBytes(st))), maxLineLen+2)
	return &lineReader{sc: sc, prefix: prefix, name: name}
}

// next returns the next line; it is valid until the following call.
func (l *lineReader) next() ([]byte, bool) {
	if !l.sc.Scan() {
		return nil, false
	}
	l.line++
	b := l.sc.Bytes()
	if l.line == 1 {
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	return bytes.TrimSuffix(b, []byte{'\r'}), true
}

func (l *lineReader) err() error {
	if err := l.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s%s:%d: line is longer than the %s a line may have", l.prefix, l.name, l.line+1, graphs.FormatBytes(maxLineLen))
		}
		return fmt.Errorf("%s%s:%d: %w", l.prefix, l.name, l.line+1, err)
	}
	return nil
}

func (l *lineReader) errf(format string, args ...any) error {
	return fmt.Errorf("%s%s:%d: %s", l.prefix, l.name, l.line, fmt.Sprintf(format, args...))
}

// Outcomes of parseIntBytes besides success.
const (
	intOK = iota
	intSyntax
	intRange
)

// parseIntBytes parses an optionally signed decimal integer (what
// strconv.ParseInt(s, 10, 64) accepts, without underscores) without
// allocating. It reports intSyntax for anything that is not such a
// number and intRange for a number outside int64.
func parseIntBytes(b []byte) (int64, int) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, intSyntax
	}
	var u uint64
	overflow := false
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, intSyntax
		}
		if overflow {
			continue
		}
		if u > (1<<63)/10 {
			overflow = true
			continue
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			overflow = true
		}
	}
	switch {
	case overflow:
		return 0, intRange
	case neg:
		return -int64(u), intOK // -(1<<63) wraps to itself, which is MinInt64
	case u > math.MaxInt64:
		return 0, intRange
	}
	return int64(u), intOK
}

// quoteField quotes a field of a text file for an error message, cut to
// 40 bytes.
func quoteField(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%q...", b[:40])
	}
	return fmt.Sprintf("%q", b)
}

// readTextFile opens the text file path, makes the first pass over it
// (scanText), rewinds it and passes it with its statistics to read. Open
// and first-pass errors are reported as "load PATH: ...".
func readTextFile(path string, read func(r io.Reader, st textStats) error) error {
	f, _, err := openInput(path)
	if err != nil {
		return fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	return readText(f, path, read)
}

// readText is readTextFile on an open file or an in-memory reader.
func readText(r io.ReadSeeker, path string, read func(r io.Reader, st textStats) error) error {
	st, err := scanText(r, path, make([]byte, 64<<10))
	if err != nil {
		return fmt.Errorf("load %w", err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("load %s: %w", path, err)
	}
	return read(r, st)
}
