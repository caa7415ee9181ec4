package graphio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// SourceBase is the URL prefix of every file in the dataset manifest. A
// mirror (FetchOptions.Mirror, $DPGNN_MIRROR) replaces it.
const SourceBase = "https://raw.githubusercontent.com"

// MirrorEnv names the environment variable that replaces SourceBase when
// FetchOptions.Mirror is empty.
const MirrorEnv = "DPGNN_MIRROR"

// DefaultFetchStall is how long a download may go without receiving a byte
// (connecting, waiting for the response, or in the body) before Fetch
// abandons it.
const DefaultFetchStall = 60 * time.Second

// RemoteFile is one published file of a dataset.
type RemoteFile struct {
	// Source is the file's URL without the base: "owner/repo/commit/path",
	// so SourceBase + "/" + Source is its raw.githubusercontent.com URL.
	Source string
	// Local is the slash-separated path of the file under the data
	// directory, in the layout Load reads.
	Local string
	// Size is the file's length in bytes; a download is cut off beyond it.
	Size int64
	// SHA256 is the lower-case hex SHA-256 of the file's bytes.
	SHA256 string
}

// RemoteDataset is a file-backed dataset and its published files.
type RemoteDataset struct {
	Name  string
	Files []RemoteFile
}

// Upstream repositories of the manifest, pinned to the commit that holds
// the files (each file's git blob at that commit was checked to hash the
// same as the copy the size and SHA-256 below were computed from).
const (
	// github.com/shchur/gnn-benchmark: "Initial commit", the only commit
	// that touches data/npz/cora.npz.
	srcGNNBenchmark = "shchur/gnn-benchmark/99356931fd6158a05de41632669d5ab69e6e105e/"
	// github.com/gasteigerjo/ppnp (formerly klicperajo/ppnp; GitHub
	// redirects the old name): the commit that last changed ppnp/data/*.npz.
	srcPPNP = "gasteigerjo/ppnp/3fe09b4582a96fc20bfcae6e9e0d7682deba2c92/"
	// github.com/bingzhewei/geom-gcn: "Initial commit", which adds
	// new_data/film/ and splits/ (unchanged since).
	srcGeomGCN = "bingzhewei/geom-gcn/74ed69daf738ab90a0fb593379311969c8244f39/"
	// github.com/KHBDL/ASGL-KDD26: the commit that adds data/ (unchanged
	// since). Upstream directory and file names are capitalised
	// (Bitcoin_Alpha/Bitcoin_Alpha.train); the local layout is lower-case.
	srcASGL = "KHBDL/ASGL-KDD26/89d53bdaa9af172ec16bde7b164ee29a01aaeb3a/"
)

// datasetManifest lists the published files of every file-backed dataset,
// in the order of datasetNames.
var datasetManifest = []RemoteDataset{
	{"cora", []RemoteFile{
		{srcGNNBenchmark + "data/npz/cora.npz", "cora.npz", 540580, "068e22d90c3849b4057dfb05851741428992af058efcd4e7ebb4186f3d581de2"},
	}},
	{"cora_ml", []RemoteFile{
		{srcPPNP + "ppnp/data/cora_ml.npz", "cora_ml.npz", 1622234, "e3439bfd32c4a962d5c56a4f313793baee39181c208c90a3915b61183d3e1cda"},
	}},
	// ppnp's citeseer.npz (3,312 nodes); gnn-benchmark's data/npz/citeseer.npz
	// is a different file (1,348,784 bytes).
	{"citeseer", []RemoteFile{
		{srcPPNP + "ppnp/data/citeseer.npz", "citeseer.npz", 1350610, "9c72e32115590d1e6b2701f7af490519c8b2948ade22ec513e262aac3e47f722"},
	}},
	{"actor", []RemoteFile{
		{srcGeomGCN + "new_data/film/out1_graph_edges.txt", "actor/out1_graph_edges.txt", 323820, "997cdce67ea9c29257d3ffe796328391931901cf823830affa453178b60e2c3e"},
		{srcGeomGCN + "new_data/film/out1_node_feature_label.txt", "actor/out1_node_feature_label.txt", 207718, "1d5cdd094f8b91e770f6decfca85b35cf42f75d1efb51055fd6af16e11820ff8"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_0.npz", "actor/film_split_0.6_0.2_0.npz", 4214, "4505a41d4e90abd94d1ec22571ce528b09ad7cf20d87f764aebd4177590767f5"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_1.npz", "actor/film_split_0.6_0.2_1.npz", 4231, "1871b0d24e3977c41e378fd24acc8025b63f86b77739be77a5b558d1287f207d"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_2.npz", "actor/film_split_0.6_0.2_2.npz", 4224, "d26680e911ef3ecc9fc2a26d90c9d35028c63aadd7a5aea774649d1496c282cb"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_3.npz", "actor/film_split_0.6_0.2_3.npz", 4207, "6755ad5f6a0be8594b344af3d2261eed935b83b73c4d70136e1a7beea7f78cb0"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_4.npz", "actor/film_split_0.6_0.2_4.npz", 4233, "328fdca62b25074f21f2922518e042f24b3b8a1fc378f9dfb2cae36439aed902"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_5.npz", "actor/film_split_0.6_0.2_5.npz", 4224, "5b3161a8dc8de4b2e651ebd56d68e768d1377044895b325566117fe26ab81cb7"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_6.npz", "actor/film_split_0.6_0.2_6.npz", 4221, "e251b38abd4d7931b5e9ae5aba99dcdf87f0be283bdf6e65421274a1c9ef1df6"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_7.npz", "actor/film_split_0.6_0.2_7.npz", 4205, "12164ef9f5620a2f12a387f4f2b8636859d42201101d6d32829ade62d5a98326"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_8.npz", "actor/film_split_0.6_0.2_8.npz", 4217, "405cd1f7f631f678119f8bf2405809e86614d532985beb59566fcf95abd35b3f"},
		{srcGeomGCN + "splits/film_split_0.6_0.2_9.npz", "actor/film_split_0.6_0.2_9.npz", 4208, "505691c5d41bb37b20d085415dcdde2e8e68b5bc4e1feb2c0e361308002012bb"},
	}},
	{"bitcoin_alpha", []RemoteFile{
		{srcASGL + "data/Bitcoin_Alpha/whole_edge.txt", "signed/bitcoin_alpha/whole_edge.txt", 235779, "0d08e71c7362376abcfe4818603d2896b776126ebd5285f139cb4ed6d4a598e9"},
		{srcASGL + "data/Bitcoin_Alpha/Bitcoin_Alpha.train", "signed/bitcoin_alpha/bitcoin_alpha.train", 188595, "e9eb3a44682dea45802bbd3f8f354744920c7c6866bb7a7a4fb3f5a3544b1bea"},
		{srcASGL + "data/Bitcoin_Alpha/Bitcoin_Alpha.test", "signed/bitcoin_alpha/bitcoin_alpha.test", 47184, "036522adc3c1febfb286a3dcfa717217c0d5968fbbebb3eb2883171ffb0a8db8"},
	}},
	{"bitcoin_otc", []RemoteFile{
		{srcASGL + "data/Bitcoin_OTC/whole_edge.txt", "signed/bitcoin_otc/whole_edge.txt", 406848, "44e8718012579edeac1ee4003a515b7f2e2009ea2683dffe2e4ca18718f25816"},
		{srcASGL + "data/Bitcoin_OTC/Bitcoin_OTC.train", "signed/bitcoin_otc/bitcoin_otc.train", 325311, "626116bb7e080c802b63733d1c8c8529a3a1b7cee20ed0a8f7ada47d933ae7c4"},
		{srcASGL + "data/Bitcoin_OTC/Bitcoin_OTC.test", "signed/bitcoin_otc/bitcoin_otc.test", 81537, "dd5d6f944dd72a69e2aaa1f76266cbf5ab67dddab0b77d8e207046440351dc43"},
	}},
	{"slashdot", []RemoteFile{
		{srcASGL + "data/Slashdot/whole_edge.txt", "signed/slashdot/whole_edge.txt", 396911, "ee3142805773d5b82be7bd2d15fd4f4331a707b209de32b904a0b19ca8ed0877"},
		{srcASGL + "data/Slashdot/Slashdot.train", "signed/slashdot/slashdot.train", 317574, "a5ce4bd823671856a85a93ec01fadb60780c77aa8288fe99bc7c652f12873b95"},
		{srcASGL + "data/Slashdot/Slashdot.test", "signed/slashdot/slashdot.test", 79338, "60d851d02f25d6cdd255fc63c5662a9bed0d9bb35ee0b00e6bb3a6476825fe59"},
	}},
	// Upstream already uses lower-case names for wikirfa.
	{"wikirfa", []RemoteFile{
		{srcASGL + "data/wikirfa/whole_edge.txt", "signed/wikirfa/whole_edge.txt", 2179692, "a857d6da40b82cbf9dce3f1bca28cb5ad1a9b3e4c72886189813390326a7de9c"},
		{srcASGL + "data/wikirfa/wikirfa.train", "signed/wikirfa/wikirfa.train", 1743856, "cb8df8fdb447a5145c12a83981b40572938a1e24fbfd49ae560df0ffe8ecbe26"},
		{srcASGL + "data/wikirfa/wikirfa.test", "signed/wikirfa/wikirfa.test", 435836, "ef12cb52f991adf2265bc831babdc73e69d94f53a04633b8b9ac20db3099a263"},
	}},
}

// DatasetManifest returns the published files of every dataset Fetch can
// download, in display order (a copy: changing it changes nothing).
func DatasetManifest() []RemoteDataset {
	out := make([]RemoteDataset, len(datasetManifest))
	for i, d := range datasetManifest {
		out[i] = RemoteDataset{Name: d.Name, Files: slices.Clone(d.Files)}
	}
	return out
}

// DefaultMirror is the base URL used when no mirror is given: $DPGNN_MIRROR
// if set, else SourceBase.
func DefaultMirror() string {
	if m := os.Getenv(MirrorEnv); m != "" {
		return m
	}
	return SourceBase
}

// FetchOptions configures Fetch.
type FetchOptions struct {
	// Mirror replaces SourceBase in every URL ("http://host/prefix" gives
	// http://host/prefix/owner/repo/commit/path). Empty means
	// DefaultMirror().
	Mirror string
	// Force replaces present files whose SHA-256 differs from the
	// manifest's; without it Fetch refuses before downloading anything.
	Force bool
	// Stall is how long a download may receive nothing before it is
	// abandoned; 0 means DefaultFetchStall.
	Stall time.Duration
	// Progress, if not nil, gets one line per file: its path and bytes,
	// and whether it was up to date or downloaded.
	Progress io.Writer
	// Manifest lists the datasets Fetch knows; nil means DatasetManifest().
	Manifest []RemoteDataset
	// Client does the requests; nil means http.DefaultClient.
	Client *http.Client
}

// FetchResult says what Fetch did for one dataset.
type FetchResult struct {
	Name       string
	Files      int   // files in the manifest
	Downloaded int   // files downloaded (the others were up to date)
	Bytes      int64 // bytes downloaded
}

// Fetch downloads the published files of the dataset called name (any case;
// "all" means every dataset of the manifest) into dataDir, in the layout
// Load reads. An empty dataDir means DefaultDataDir().
//
// Every file is checked first: a present file with the manifest's SHA-256
// is up to date and skipped; a present file with another SHA-256 (or a
// non-regular file in its place) stops Fetch before it downloads anything,
// unless opt.Force (then it is replaced). Each missing file is then
// streamed from its URL into a temporary file beside its target, cut off
// beyond the manifest's size, and renamed into place (WriteFileAtomic) only
// when its length and SHA-256 match: an error, a short or long transfer, a
// checksum mismatch or a cancelled ctx leaves no partial and no temporary
// file, and directories Fetch created that stay empty are removed. Files
// downloaded before a failure are complete and verified, and stay.
//
// Errors are one line naming the URL or file and the expected and actual
// bytes or SHA-256; an interruption through ctx wraps ctx's error.
func Fetch(ctx context.Context, name, dataDir string, opt FetchOptions) ([]FetchResult, error) {
	manifest := opt.Manifest
	if manifest == nil {
		manifest = datasetManifest
	}
	sets, err := selectDatasets(manifest, name)
	if err != nil {
		return nil, err
	}
	base := opt.Mirror
	if base == "" {
		base = DefaultMirror()
	}
	if err := checkMirror(base); err != nil {
		return nil, err
	}
	if dataDir == "" {
		dataDir = DefaultDataDir()
	}
	stall := opt.Stall
	if stall <= 0 {
		stall = DefaultFetchStall
	}
	client := opt.Client
	if client == nil {
		client = http.DefaultClient
	}
	progress := opt.Progress
	if progress == nil {
		progress = io.Discard
	}

	// Check every file before downloading any.
	type job struct {
		set     int
		file    RemoteFile
		path    string
		replace string // the present file's SHA-256 when it is replaced
	}
	var jobs []job
	results := make([]FetchResult, len(sets))
	for i, d := range sets {
		results[i] = FetchResult{Name: d.Name, Files: len(d.Files)}
		for _, f := range d.Files {
			path := filepath.Join(dataDir, filepath.FromSlash(f.Local))
			state, sum, err := checkPresent(path, f)
			if err != nil {
				return nil, err
			}
			switch state {
			case fileUpToDate:
				fmt.Fprintf(progress, "%s: up to date (%d bytes)\n", path, f.Size)
			case fileMissing:
				jobs = append(jobs, job{set: i, file: f, path: path})
			case fileDiffers:
				if !opt.Force {
					return nil, fmt.Errorf("%s is already there with sha256 %s, not the published %s (%d bytes): move it away or use --force to replace it",
						path, sum, f.SHA256, f.Size)
				}
				jobs = append(jobs, job{set: i, file: f, path: path, replace: sum})
			}
		}
	}

	var created []string
	defer func() {
		// Directories made for files that were not written go again
		// (os.Remove leaves the ones that hold something).
		for _, d := range slices.Backward(created) {
			os.Remove(d)
		}
	}()
	for _, j := range jobs {
		dirs, err := mkdirAllTracked(filepath.Dir(j.path))
		created = append(created, dirs...)
		if err != nil {
			return nil, fmt.Errorf("cannot create the directory for %s: %w", j.path, err)
		}
		u := strings.TrimRight(base, "/") + "/" + j.file.Source
		if err := download(ctx, client, u, j.path, j.file, stall); err != nil {
			return nil, err
		}
		results[j.set].Downloaded++
		results[j.set].Bytes += j.file.Size
		if j.replace != "" {
			fmt.Fprintf(progress, "%s: %d bytes from %s (replaced a file with sha256 %s)\n", j.path, j.file.Size, u, j.replace)
		} else {
			fmt.Fprintf(progress, "%s: %d bytes from %s\n", j.path, j.file.Size, u)
		}
	}
	created = nil // every file was written: keep the directories
	return results, nil
}

// selectDatasets resolves name ("all" or a dataset name, any case) in
// manifest.
func selectDatasets(manifest []RemoteDataset, name string) ([]RemoteDataset, error) {
	key := strings.ToLower(name)
	if key == "all" {
		return manifest, nil
	}
	for _, d := range manifest {
		if d.Name == key {
			return []RemoteDataset{d}, nil
		}
	}
	if kind, ok := datasetKinds[key]; ok && kind == kindGenerated {
		return nil, fmt.Errorf("%s is generated by dpgnn, there is nothing to fetch", key)
	}
	known := make([]string, 0, len(manifest)+1)
	for _, d := range manifest {
		known = append(known, d.Name)
	}
	return nil, fmt.Errorf("unknown dataset %q (datasets to fetch: %s, or all)", name, strings.Join(known, ", "))
}

// checkMirror checks that base is an http or https URL with a host.
func checkMirror(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("mirror %q is not an http:// or https:// URL", base)
	}
	return nil
}

type presentState int

const (
	fileMissing presentState = iota
	fileUpToDate
	fileDiffers
)

// checkPresent says whether the file for f at path is missing, up to date
// or different, with its SHA-256 when it differs. A non-regular file
// (after following links) at path is an error.
func checkPresent(path string, f RemoteFile) (presentState, string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(path); lerr == nil {
			return 0, "", fmt.Errorf("%s is a symbolic link to a file that does not exist: remove it or make it point to where the file should go", path)
		}
		return fileMissing, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	if !st.Mode().IsRegular() {
		return 0, "", fmt.Errorf("%s is %s, not a regular file: remove it to fetch the published file", path, describeMode(st.Mode()))
	}
	h := sha256.New()
	r, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer r.Close()
	if _, err := io.Copy(h, r); err != nil {
		return 0, "", fmt.Errorf("reading %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if sum == f.SHA256 && st.Size() == f.Size {
		return fileUpToDate, sum, nil
	}
	return fileDiffers, sum, nil
}

// mkdirAllTracked is os.MkdirAll(dir, 0o755) that returns the directories
// it created, outermost first.
func mkdirAllTracked(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing)
	for i, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return missing[:i], err
		}
	}
	return missing, nil
}

// downloadError is a failed transfer's one-line report; WriteFileAtomic
// passes it through so Fetch returns it unwrapped.
type downloadError struct {
	msg   string
	cause error // wrapped when the transfer was interrupted through ctx
}

func (e *downloadError) Error() string { return e.msg }
func (e *downloadError) Unwrap() error { return e.cause }

// errStalled is the cause of a download abandoned for receiving nothing.
var errStalled = errors.New("stalled")

// download streams u into path (atomically, see Fetch), checking f's size
// and SHA-256.
func download(parent context.Context, client *http.Client, u, path string, f RemoteFile, stall time.Duration) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	timer := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer timer.Stop()
	// failed describes err, an error of the request (n < 0: no response)
	// or of reading the body after n bytes.
	failed := func(n int64, err error) *downloadError {
		what := fmt.Sprintf("%s: transfer interrupted after %d of %d bytes", u, n, f.Size)
		if n < 0 {
			what = fmt.Sprintf("%s: no response", u)
		}
		switch {
		case parent.Err() != nil:
			return &downloadError{what + " (" + parent.Err().Error() + ")", parent.Err()}
		case errors.Is(context.Cause(ctx), errStalled):
			return &downloadError{fmt.Sprintf("%s (nothing received for %v)", what, stall), nil}
		}
		return &downloadError{fmt.Sprintf("%s: %v", what, unwrapURLError(err)), nil}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return failed(-1, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s (want the %d-byte file with sha256 %s)", u, resp.Status, f.Size, f.SHA256)
	}
	if resp.ContentLength >= 0 && resp.ContentLength != f.Size {
		return fmt.Errorf("%s: the server sends %d bytes, want %d (sha256 %s); nothing was written", u, resp.ContentLength, f.Size, f.SHA256)
	}
	body := &stallReader{r: io.LimitReader(resp.Body, f.Size+1), t: timer, d: stall}
	err = WriteFileAtomic(path, func(w io.Writer) error {
		h := sha256.New()
		out := &errWriter{w: io.MultiWriter(w, h)}
		n, err := io.Copy(out, body)
		switch {
		case out.err != nil:
			return out.err // the temporary file failed; WriteFileAtomic says so
		case err != nil:
			return failed(n, err)
		case n > f.Size:
			return &downloadError{msg: fmt.Sprintf("%s: more than the published %d bytes (sha256 %s)", u, f.Size, f.SHA256)}
		case n < f.Size:
			return &downloadError{msg: fmt.Sprintf("%s: transfer ended after %d of %d bytes", u, n, f.Size)}
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
			return &downloadError{msg: fmt.Sprintf("%s: sha256 %s, want %s (%d bytes)", u, sum, f.SHA256, n)}
		}
		return nil
	})
	var de *downloadError
	if errors.As(err, &de) {
		return &downloadError{de.msg + "; nothing was written", de.cause}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// unwrapURLError drops the *url.Error wrapper, whose message repeats the
// method and URL the caller already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// stallReader pushes the stall timer t back by d whenever bytes arrive
// from r.
type stallReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.t.Reset(s.d)
	}
	return n, err
}

// errWriter remembers the error of a write to w.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}
