package graphio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/internal/testutil"
)

// fetchFixture is a manifest of two datasets, cora (one npz file) and
// bitcoin_alpha (three files under signed/), with the directory holding
// their files in the layout Load reads. With the real datasets at hand
// these are the manifest's own entries and files; else small generated
// graphs with a manifest computed from them.
func fetchFixture(t *testing.T) (manifest []RemoteDataset, srcDir string) {
	t.Helper()
	if dir, ok := testutil.SharedDatasets(); ok {
		for _, d := range DatasetManifest() {
			if d.Name == "cora" || d.Name == "bitcoin_alpha" {
				manifest = append(manifest, d)
			}
		}
		return manifest, dir
	}
	srcDir = t.TempDir()
	g := gen.CSBM(gen.CSBMConfig{Nodes: 60, Classes: 3, Features: 8, AvgDegree: 4, Homophily: 0.8, Signal: 1}, 7)
	if err := SaveNPZ(filepath.Join(srcDir, "cora.npz"), g); err != nil {
		t.Fatal(err)
	}
	signed := map[string]string{
		"whole_edge.txt":      "1\t2\t1\n2\t3\t-1\n3\t4\t1\n4\t1\t1\n1\t3\t-1\n",
		"bitcoin_alpha.train": "1\t2\t1\n2\t3\t-1\n3\t4\t1\n4\t1\t1\n",
		"bitcoin_alpha.test":  "1\t3\t-1\n",
	}
	os.MkdirAll(filepath.Join(srcDir, "signed", "bitcoin_alpha"), 0o755)
	for name, content := range signed {
		if err := os.WriteFile(filepath.Join(srcDir, "signed", "bitcoin_alpha", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(local string) RemoteFile {
		b, err := os.ReadFile(filepath.Join(srcDir, filepath.FromSlash(local)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return RemoteFile{Source: "owner/repo/commit/" + local, Local: local, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
	}
	return []RemoteDataset{
		{"cora", []RemoteFile{entry("cora.npz")}},
		{"bitcoin_alpha", []RemoteFile{entry("signed/bitcoin_alpha/whole_edge.txt"),
			entry("signed/bitcoin_alpha/bitcoin_alpha.train"), entry("signed/bitcoin_alpha/bitcoin_alpha.test")}},
	}, srcDir
}

// fetchServer serves the manifest's files from srcDir at "/" + Source,
// passing each file's bytes through serve (nil: sent as they are). It
// counts the requests.
func fetchServer(t *testing.T, manifest []RemoteDataset, srcDir string, serve func(w http.ResponseWriter, r *http.Request, b []byte)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	files := map[string]string{}
	for _, d := range manifest {
		for _, f := range d.Files {
			files["/"+f.Source] = filepath.Join(srcDir, filepath.FromSlash(f.Local))
		}
	}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		path, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if serve != nil {
			serve(w, r, b)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// dirEntries lists every file and directory under dir (relative paths).
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func wantOneLine(t *testing.T, err error, subs ...string) {
	t.Helper()
	wantErr(t, err, subs...)
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans several lines: %q", err)
	}
}

// TestFetchManifest: the manifest lists every file-backed dataset in
// display order, in the layout Load reads, from sources pinned to commits;
// with the real datasets at hand, their sizes and SHA-256 are the
// manifest's and every file there is listed.
func TestFetchManifest(t *testing.T) {
	var names, want []string
	for _, n := range datasetNames {
		if datasetKinds[n] != kindGenerated {
			want = append(want, n)
		}
	}
	listed := map[string]RemoteFile{}
	pinned := regexp.MustCompile(`^[A-Za-z0-9_-]+/[A-Za-z0-9._-]+/[0-9a-f]{40}/`)
	for _, d := range DatasetManifest() {
		names = append(names, d.Name)
		root, _ := DatasetPath(d.Name, "DIR")
		for _, f := range d.Files {
			listed[f.Local] = f
			p := filepath.Join("DIR", filepath.FromSlash(f.Local))
			if p != root && !strings.HasPrefix(p, root+string(os.PathSeparator)) {
				t.Errorf("%s: %s is not under %s", d.Name, p, root)
			}
			if !pinned.MatchString(f.Source) {
				t.Errorf("%s: source %s is not owner/repo/COMMIT/path", d.Name, f.Source)
			}
			if len(f.SHA256) != 64 || strings.Trim(f.SHA256, "0123456789abcdef") != "" || f.Size <= 0 {
				t.Errorf("%s: %s: size %d sha256 %q", d.Name, f.Local, f.Size, f.SHA256)
			}
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("manifest lists %v, want %v", names, want)
	}
	dir, ok := testutil.SharedDatasets()
	if !ok {
		t.Log("real datasets not found: sizes and SHA-256 not checked against files")
		return
	}
	seen := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "README.md" {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		f, ok := listed[filepath.ToSlash(rel)]
		if !ok {
			t.Errorf("%s is not in the manifest", rel)
			return nil
		}
		seen++
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 || int64(len(b)) != f.Size {
			t.Errorf("%s: %d bytes sha256 %s, manifest says %d bytes sha256 %s", rel, len(b), got, f.Size, f.SHA256)
		}
		return nil
	})
	if seen != len(listed) {
		t.Errorf("%d of the manifest's %d files are in %s", seen, len(listed), dir)
	}
}

// TestFetchDownloadsAndLoads: `all` downloads every file (one progress
// line each) and the fetched datasets load to the same graphs as the
// originals; a second fetch finds them up to date and sends no request.
func TestFetchDownloadsAndLoads(t *testing.T) {
	manifest, src := fetchFixture(t)
	srv, requests := fetchServer(t, manifest, src, nil)
	dataDir := t.TempDir()
	var progress strings.Builder
	res, err := Fetch(context.Background(), "ALL", dataDir, FetchOptions{Mirror: srv.URL, Progress: &progress, Manifest: manifest})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(res) != 2 || res[0].Downloaded != 1 || res[1].Downloaded != 3 || len(lines) != 4 {
		t.Fatalf("results %+v, progress:\n%s", res, progress.String())
	}
	want := fmt.Sprintf("%s: %d bytes from %s/%s", filepath.Join(dataDir, "cora.npz"), manifest[0].Files[0].Size, srv.URL, manifest[0].Files[0].Source)
	if lines[0] != want {
		t.Errorf("progress line %q, want %q", lines[0], want)
	}
	for _, name := range []string{"cora", "bitcoin_alpha"} {
		got, err := Load(name, dataDir, 1)
		if err != nil {
			t.Fatal(err)
		}
		orig, err := Load(name, src, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, orig) {
			t.Errorf("%s: the fetched dataset loads differently from the original", name)
		}
	}
	// Up to date: no request; the mirror may also come from $DPGNN_MIRROR.
	t.Setenv(MirrorEnv, "http://127.0.0.1:1")
	progress.Reset()
	before := requests.Load()
	res, err = Fetch(context.Background(), "cora", dataDir, FetchOptions{Progress: &progress, Manifest: manifest})
	if err != nil || res[0].Downloaded != 0 || requests.Load() != before {
		t.Fatalf("second fetch: %+v %v, %d requests", res, err, requests.Load()-before)
	}
	if want := filepath.Join(dataDir, "cora.npz") + ": up to date"; !strings.HasPrefix(progress.String(), want) {
		t.Errorf("progress %q, want %q", progress.String(), want)
	}
}

// TestFetchBadTransferLeavesNothing: a checksum mismatch, a body longer or
// shorter than the manifest's size, a connection closed midway, a stalled
// or cancelled transfer and an HTTP error each fail in one line naming the
// URL and leave the data directory as it was (no file, no temporary file,
// no directory).
func TestFetchBadTransferLeavesNothing(t *testing.T) {
	manifest, src := fetchFixture(t)
	cora := manifest[0].Files[0]
	// cut sends the headers announcing the full length, then half the
	// bytes, then closes the connection.
	cut := func(w http.ResponseWriter, _ *http.Request, b []byte) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(b))
		buf.Write(b[:len(b)/2])
		buf.Flush()
	}
	// stall sends half the bytes and waits for the client to go away.
	stall := func(w http.ResponseWriter, r *http.Request, b []byte) {
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b[:len(b)/2])
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	flipped := func(w http.ResponseWriter, _ *http.Request, b []byte) {
		b[len(b)/2] ^= 1
		w.Write(b)
	}
	// chunked sends b without a Content-Length.
	chunked := func(w http.ResponseWriter, b []byte) {
		http.NewResponseController(w).Flush()
		w.Write(b)
	}
	b, err := os.ReadFile(filepath.Join(src, cora.Local))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	flippedSum := sha256.Sum256(b)
	half := fmt.Sprintf("after %d of %d bytes", cora.Size/2, cora.Size)
	cases := []struct {
		name   string
		serve  func(http.ResponseWriter, *http.Request, []byte)
		cancel bool
		want   []string
		isCtx  bool
	}{
		{"checksum mismatch", flipped, false, []string{"sha256 " + hex.EncodeToString(flippedSum[:]), "want " + cora.SHA256, "; nothing was written"}, false},
		{"too long", func(w http.ResponseWriter, _ *http.Request, b []byte) { chunked(w, append(b, 'x')) }, false,
			[]string{fmt.Sprintf("more than the published %d bytes", cora.Size), "nothing was written"}, false},
		{"too short", func(w http.ResponseWriter, _ *http.Request, b []byte) { chunked(w, b[:10]) }, false,
			[]string{fmt.Sprintf("transfer ended after 10 of %d bytes", cora.Size)}, false},
		{"wrong length announced", func(w http.ResponseWriter, _ *http.Request, b []byte) {
			w.Header().Set("Content-Length", "10")
			w.Write(b[:10])
		}, false, []string{fmt.Sprintf("the server sends 10 bytes, want %d", cora.Size)}, false},
		{"connection closed midway", cut, false, []string{"transfer interrupted " + half, "unexpected EOF", "nothing was written"}, false},
		{"stalled", stall, false, []string{"transfer interrupted " + half, "nothing received for 200ms"}, false},
		{"cancelled", stall, true, []string{"transfer interrupted " + half, "context canceled"}, true},
		{"not found", func(w http.ResponseWriter, _ *http.Request, b []byte) { http.Error(w, "gone", http.StatusNotFound) }, false, []string{"404 Not Found"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := fetchServer(t, manifest, src, c.serve)
			dataDir := filepath.Join(t.TempDir(), "data")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			// A cancelled transfer must end by the cancellation, not by the
			// stall timer: under load the 100 ms cancel could come after a
			// 200 ms stall, so that case waits 10 s for a stall.
			stallAfter := 200 * time.Millisecond
			if c.cancel {
				stallAfter = 10 * time.Second
			}
			_, err := Fetch(ctx, "cora", dataDir, FetchOptions{Mirror: srv.URL, Manifest: manifest, Stall: stallAfter})
			wantOneLine(t, err, append([]string{srv.URL + "/" + cora.Source + ": "}, c.want...)...)
			if got := errors.Is(err, context.Canceled); got != c.isCtx {
				t.Errorf("errors.Is(err, context.Canceled) = %v", got)
			}
			if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the data directory was left behind: %v %v", err, dirEntries(t, dataDir))
			}
		})
	}
	// A failure in a directory that exists leaves it as it was.
	srv, _ := fetchServer(t, manifest, src, cut)
	dataDir := t.TempDir()
	_, err = Fetch(context.Background(), "bitcoin_alpha", dataDir, FetchOptions{Mirror: srv.URL, Manifest: manifest})
	wantOneLine(t, err, "transfer interrupted")
	if e := dirEntries(t, dataDir); len(e) != 0 {
		t.Errorf("left behind: %v", e)
	}
}

// TestFetchPresentFiles: a present file with another SHA-256 stops the
// fetch before any request unless Force, which replaces it; a directory in
// a file's place is refused even with Force.
func TestFetchPresentFiles(t *testing.T) {
	manifest, src := fetchFixture(t)
	srv, requests := fetchServer(t, manifest, src, nil)
	cora := manifest[0].Files[0]
	dataDir := t.TempDir()
	path := filepath.Join(dataDir, "cora.npz")
	if err := os.WriteFile(path, []byte("not the published file"), 0o644); err != nil {
		t.Fatal(err)
	}
	wrong := sha256.Sum256([]byte("not the published file"))
	opt := FetchOptions{Mirror: srv.URL + "/", Manifest: manifest}
	_, err := Fetch(context.Background(), "cora", dataDir, opt)
	wantOneLine(t, err, path+" is already there with sha256 "+hex.EncodeToString(wrong[:]), "not the published "+cora.SHA256, "--force")
	if b, _ := os.ReadFile(path); string(b) != "not the published file" || requests.Load() != 0 {
		t.Errorf("refused fetch changed the file (%q) or sent %d requests", b, requests.Load())
	}
	opt.Force = true
	var progress strings.Builder
	opt.Progress = &progress
	if _, err := Fetch(context.Background(), "cora", dataDir, opt); err != nil {
		t.Fatal(err)
	}
	if st, _, err := checkPresent(path, cora); err != nil || st != fileUpToDate {
		t.Errorf("after --force: state %v, %v", st, err)
	}
	if !strings.Contains(progress.String(), "replaced a file with sha256 "+hex.EncodeToString(wrong[:])) {
		t.Errorf("progress %q", progress.String())
	}
	os.Remove(path)
	os.Mkdir(path, 0o755)
	_, err = Fetch(context.Background(), "cora", dataDir, opt)
	wantOneLine(t, err, path+" is a directory, not a regular file")
}

// TestFetchNames: unknown and generated names and bad mirrors are refused
// in one line before anything is fetched.
func TestFetchNames(t *testing.T) {
	ctx := context.Background()
	_, err := Fetch(ctx, "pubmed", t.TempDir(), FetchOptions{})
	wantOneLine(t, err, `unknown dataset "pubmed"`, "cora, cora_ml, citeseer, actor, bitcoin_alpha, bitcoin_otc, slashdot, wikirfa, or all")
	_, err = Fetch(ctx, "csbm", t.TempDir(), FetchOptions{})
	wantOneLine(t, err, "csbm is generated by dpgnn, there is nothing to fetch")
	_, err = Fetch(ctx, "cora", t.TempDir(), FetchOptions{Mirror: "ftp.example.org/x"})
	wantOneLine(t, err, `mirror "ftp.example.org/x" is not an http:// or https:// URL`)
}

// TestMissingDatasetSaysFetch: a missing dataset's error gives the fetch
// command, with --data-dir when it is not the default.
func TestMissingDatasetSaysFetch(t *testing.T) {
	empty := t.TempDir()
	_, err := Load("Cora", empty, 1)
	wantOneLine(t, err, "run `dpgnn data fetch cora --data-dir "+empty+"` to download it")
	t.Setenv("DPGNN_DATA", empty)
	_, err = Load("actor", "", 1)
	wantOneLine(t, err, "run `dpgnn data fetch actor` to download it")
}
