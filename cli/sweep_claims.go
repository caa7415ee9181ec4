package cli

import (
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dpgnn/dpgnn/graphs/io"
)

// runClaims are the claims on the runs of one results file, so that
// sweeps started on the same --out at once (by hand, twice; or a shard
// given twice) never train the same run: one lock file per run in a
// hidden directory beside the results file (DIR/.results.jsonl.claims/),
// locked exclusively (flock) by the sweep that trains the run, from before
// the run starts until its record is appended and synced. A sweep that
// finds a run claimed leaves it to the holder and trains the others; when
// it has nothing else to do it waits for the claim, and then trains the
// run only if no record of it has appeared (the holder was interrupted or
// killed: the kernel releases a dead process's locks, so a claim never
// outlives its sweep). The lock files stay (empty but for the holder's
// name): removing one while another sweep opens it would let two sweeps
// lock two different files of one name.
type runClaims struct {
	dir string
	// who names this process in the files it locks.
	who string
}

// claimPoll is how often a sweep that waits for another's run tries its
// claim again.
var claimPoll = 200 * time.Millisecond

// claimsDir is the claims directory of a results file.
func claimsDir(results string) string {
	return filepath.Join(filepath.Dir(results), "."+filepath.Base(results)+".claims")
}

// openClaims creates (if needed) the claims directory of a results file.
func openClaims(results string) (*runClaims, error) {
	dir := claimsDir(results)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the directory of run claims %s: %w", dir, graphio.BareErr(err))
	}
	host, _ := os.Hostname()
	return &runClaims{dir: dir, who: fmt.Sprintf("pid %d on %s", os.Getpid(), host)}, nil
}

// file is the lock file of a run: METHOD_epsE_seedS.lock with the method
// label escaped (a label may hold any character), or a hash of that name
// when it is too long for a file name.
func (c *runClaims) file(k runKey) string {
	name := fmt.Sprintf("%s_eps%s_seed%d.lock", url.PathEscape(k.method), strconv.FormatFloat(k.eps, 'g', -1, 64), k.seed)
	if len(name) > 200 {
		name = fmt.Sprintf("%x.lock", sha256.Sum256([]byte(name)))
	}
	return filepath.Join(c.dir, name)
}

// runClaim is a claim held: release it once the run's record is written
// (or the run ended without one).
type runClaim struct {
	f      *os.File
	unlock func()
}

// try claims run k without waiting. It returns the claim, or nil and who
// holds it ("pid 123 on node7", as its holder wrote it) when another sweep
// does.
func (c *runClaims) try(k runKey) (*runClaim, string, error) {
	path := c.file(k)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, "", fmt.Errorf("claim %s: %w", path, graphio.BareErr(err))
	}
	ok, unlock, err := tryLockFile(f)
	if err != nil {
		f.Close()
		return nil, "", fmt.Errorf("claim %s: %w", path, err)
	}
	if !ok {
		b := make([]byte, 200)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := strings.TrimSpace(string(b[:n]))
		if holder == "" {
			holder = "another sweep"
		}
		return nil, holder, nil
	}
	// Who holds it, for the messages of the sweeps that find it held; the
	// claim is the lock, not these bytes.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(c.who+" since "+time.Now().UTC().Format(time.RFC3339)+"\n"), 0)
	}
	return &runClaim{f: f, unlock: unlock}, "", nil
}

// release gives the claim up.
func (c *runClaim) release() {
	if c == nil {
		return
	}
	c.unlock()
	c.f.Close()
}
