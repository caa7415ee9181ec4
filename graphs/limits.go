package graphs

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Memory limit.
//
// Loaders and generators refuse inputs whose size implies an absurd
// allocation before they make it: a corrupt or mistyped input (one feature
// id 999999 in a text file, one label 1000000, `--nodes 1e11`) should fail
// at once with the numbers, not make a run allocate tens of gigabytes and
// hang. What is estimated is stated where the check is made:
//
//   - a loaded graph's features as the dense float64 matrix N·F·8 bytes that
//     training builds from them (LoadNPZ, LoadGeomGCN);
//   - a loaded graph's class count as one N×C float64 matrix (logits or
//     one-hot labels, N·C·8 bytes; LoadNPZ, LoadGeomGCN);
//   - a generated graph's peak memory while it is built and written
//     (CSBMConfig.EstimateBytes).
//
// The limit is DefaultMemoryLimit unless $DPGNN_MAX_MEMORY sets another
// (a size such as "16GB", "512MiB" or "2e10").
const (
	// DefaultMemoryLimit is the largest estimated allocation, in bytes,
	// that a loader, a generator or a training run accepts when
	// $DPGNN_MAX_MEMORY is unset (and `--max-memory` is not given): 16 GB,
	// far above every dataset the project ships (cora's dense features take
	// 31 MB) and below the memory of the machines it runs on.
	DefaultMemoryLimit = 16_000_000_000
	// MemoryLimitEnv is the environment variable that overrides
	// DefaultMemoryLimit.
	MemoryLimitEnv = "DPGNN_MAX_MEMORY"
)

// MemoryLimit returns the memory limit in bytes: $DPGNN_MAX_MEMORY parsed
// by ParseBytes, or DefaultMemoryLimit when it is unset or empty.
func MemoryLimit() (int64, error) {
	s := strings.TrimSpace(os.Getenv(MemoryLimitEnv))
	if s == "" {
		return DefaultMemoryLimit, nil
	}
	b, err := ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("$%s=%q: %w", MemoryLimitEnv, s, err)
	}
	return b, nil
}

// byteUnits maps size suffixes (lower case) to their multipliers: k, M, G,
// T (with or without B) are decimal, KiB, MiB, GiB, TiB binary.
var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseBytes parses a positive size in bytes: a number (integer or
// decimal, e.g. "2e10") optionally followed by a unit — B, kB, MB, GB, TB
// (powers of 1000; K, M, G, T alone mean the same) or KiB, MiB, GiB, TiB
// (powers of 1024), case-insensitive.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] >= 'a' && t[i-1] <= 'z' || t[i-1] >= 'A' && t[i-1] <= 'Z') {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(t[i:])
	mul, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, kB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q is not a number of bytes", s)
	}
	b := v * mul
	if !(b >= 1) || b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is out of range (want at least 1 byte)", s)
	}
	return int64(b), nil
}

// FormatBytes formats a byte count with a decimal unit and at most three
// significant digits ("31 MB", "21.7 GB", "150 kB").
func FormatBytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	u := 0
	for b >= 999.95 && u < len(units)-1 {
		b /= 1000
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	if b >= 99.95 {
		return fmt.Sprintf("%.0f %s", b, units[u])
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", b), ".0") + " " + units[u]
}

// CheckMemory returns an error when est bytes exceed the memory limit
// (MemoryLimit); the message is "WHAT would take EST (limit L; raise it
// with --max-memory or $DPGNN_MAX_MEMORY)". Loaders and generators call it
// before they allocate.
func CheckMemory(what string, est float64) error {
	limit, err := MemoryLimit()
	if err != nil {
		return err
	}
	if est > float64(limit) {
		return fmt.Errorf("%s would take %s (limit %s; %s)",
			what, FormatBytes(est), FormatBytes(float64(limit)), RaiseLimitHint)
	}
	return nil
}

// RaiseLimitHint is the end of every memory-limit message.
const RaiseLimitHint = "raise it with --max-memory or $" + MemoryLimitEnv
