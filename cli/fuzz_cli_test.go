package cli

import (
	"bytes"
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/spf13/pflag"
)

// cliFuzzDatasets are what --dataset (and data info's NAME) can name in
// FuzzCLIFlags: the tiny generated graphs, files in its temporary
// directory (valid and broken), a real dataset through --data-dir, and
// names that resolve to nothing. Training on any of them takes
// milliseconds.
func cliFuzzDatasets(t testing.TB, dir string) (list []string, alias map[string]string) {
	g := gen.SmallStar(9, 1)
	good := filepath.Join(dir, "good.npz")
	if err := graphio.SaveNPZ(good, g); err != nil {
		t.Fatal(err)
	}
	noFeat := *g
	noFeat.X = &graphs.Features{N: g.N, F: 0, Dense: []float64{}}
	bad := filepath.Join(dir, "nofeat.npz")
	if err := graphio.SaveNPZ(bad, &noFeat); err != nil {
		t.Fatal(err)
	}
	geom := relWriteFiles(t, filepath.Join(dir, "geom"), map[string]string{
		"out1_node_feature_label.txt": "\xef\xbb\xbf0\t0,1\t0\n1\t1\t1\n2\t2\t0\n3\t0\t1\n",
		"out1_graph_edges.txt":        "0\t1\n1\t2\n2\t3\n3\t0\n",
	})
	signed := relWriteFiles(t, filepath.Join(dir, "signed", "toy"), map[string]string{
		"whole_edge.txt": "1 2 1\n2 3 -1\n3 4 1\n4 1 -1\n1 3 1\n2 4 -1\n",
		"toy.train":      "1 2 1\n2 3 -1\n3 4 1\n4 1 -1\n",
		"toy.test":       "1 3 1\n2 4 -1\n",
	})
	alias = map[string]string{"good": good, "nofeat": bad, "geom": geom, "signed": signed}
	return []string{"", "star-9", "path", "double-star", good, bad, geom, signed, "cora", "nosuch", filepath.Join(dir, "nosuch.npz"), dir}, alias
}

// cliFuzzPick is the dataset a fuzzed value names: one of the list or an
// alias as given, else one of the list by the value's hash.
func cliFuzzPick(value string, list []string, alias map[string]string) string {
	if p, ok := alias[value]; ok {
		return p
	}
	if slices.Contains(list, value) {
		return value
	}
	return list[cliFuzzHash(value, len(list))]
}

// cliFuzzCommands are the commands FuzzCLIFlags runs: train with every
// built-in method (not the ones other tests register), and data info.
func cliFuzzCommands() [][]string {
	var out [][]string
	for _, m := range []string{"asgl", "caribou", "dpar", "gap", "gcn", "gcon", "mlp", "progap"} {
		if slices.Contains(methods.Names(), m) {
			out = append(out, []string{"train", m})
		}
	}
	return append(out, []string{"data", "info"})
}

// cliFuzzFirstLine is the first line of s.
func cliFuzzFirstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// cliFuzzHash maps s to [0, n).
func cliFuzzHash(s string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(n))
}

// cliFuzzWorkFlag reports whether a flag sets an amount of work (epochs, runs,
// widths, hops, ...): FuzzCLIFlags trains for real only when every such
// value is small.
func cliFuzzWorkFlag(name string) bool {
	for _, w := range []string{"epoch", "runs", "step", "iter", "hop", "layer", "hidden", "batch", "walk", "trial", "candidate", "dim", "stage", "sample", "width", "length", "neighbor", "rounds", "k"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// FuzzCLIFlags runs `dpgnn train METHOD` and `dpgnn data info` with fuzzed
// flag combinations: sel picks the command (and whether the run trains),
// and each line "name=value" of spec sets one of the command's own flags
// (name is taken when the command has that flag, else it picks one by its
// hash; a line without "=" gives the flag alone). --dataset and data
// info's NAME pick among cliFuzzDatasets, --trace writes in a temporary
// directory. With sel's top bit set, a tiny --dataset and every work-size
// value at most 16, the command trains; otherwise its context is already
// cancelled, so train parses, validates and loads everything and stops
// before its first run (exit 130), cheaply. (A run trains only on a tiny
// dataset named by --dataset: the default csbm graph or cora take a second
// or more to train, which would stall the fuzzer.) A failure is a panic, an error
// that is empty or spans several lines, or stdout written by a command
// that failed (other than an interrupted train, which prints the runs
// that finished: none here).
func FuzzCLIFlags(f *testing.F) {
	dir := f.TempDir()
	datasets, alias := cliFuzzDatasets(f, dir)
	shared, _ := testutil.SharedDatasets()
	commands := cliFuzzCommands()
	for _, s := range []struct {
		sel  uint8
		spec string
	}{
		{0x80 | 4, "epochs=2\nruns=2\ndataset=star-9"},                // gcn, trained
		{0x80 | 3, "epochs=2\nprivacy=edge\nepsilon=1\ndataset=path"}, // gap
		{0x80 | 6, "privacy=node\nepsilon=1\ndelta=1e-5\nepochs=3\ndataset=good"},
		{0x80 | 1, "privacy=node\nepsilon=4\ndelta=1e-5\nmax-degree=9\nepochs=2\ndataset=star-9"}, // caribou
		{0x80 | 2, "epochs=2\nsplit=ratio:0.5:0.3\ndataset=double-star"},                          // dpar
		{0x80 | 5, "privacy=edge\nepsilon=2\ndataset=geom"},                                       // gcon
		{0x80 | 7, "privacy=edge\nepsilon=1\nepochs=2\ndataset=path"},
		{0x80, "dataset=signed\nprivacy=node\nepsilon=2\ndelta=1e-5\nepochs=1"}, // asgl
		{1, "privacy=node\nepsilon=1\ndelta=1e-5\nmax-memory=1MB"},
		{2, "split=ratio:0.0001:0.2"},
		{3, "split=masks:3\nfeatures=l1"},
		{4, "epsilon=-1"},
		{5, "delta=0.5\nprivacy=edge\nepsilon=inf"},
		{6, "hidden=1000000000"},
		{7, "json\nquiet\nseed=18446744073709551615"},
		{8, "geom\ndata-dir=x\nmax-memory=lots"},
		{8, "cora\ndata-dir=x\njson\nmax-memory=512MiB"},
		{8, "signed\njson"},
		{0x80 | 6, "selection=private\nselection-epsilon=0.1\nprivacy=node\nepsilon=2\ndelta=1e-5\nepochs=3\ndataset=star-9"},
		{0x80 | 4, "trace=t.jsonl\nepochs=1\ndataset=path"},
	} {
		f.Add(s.sel, s.spec)
	}
	f.Fuzz(func(t *testing.T, sel uint8, spec string) {
		defer func(old string, had bool) {
			if had {
				os.Setenv(graphs.MemoryLimitEnv, old)
			} else {
				os.Unsetenv(graphs.MemoryLimitEnv)
			}
		}(os.LookupEnv(graphs.MemoryLimitEnv))
		var out, errb bytes.Buffer
		root := newRoot(&out, &errb)
		path := commands[int(sel&0x7f)%len(commands)]
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		cmd.Flags().VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
		slices.Sort(names)
		args := slices.Clone(path)
		if path[0] == "data" {
			args = append(args, cliFuzzPick(cliFuzzFirstLine(spec), datasets, alias))
		}
		small, tiny := true, false
		lines := strings.Split(spec, "\n")
		if path[0] == "data" {
			lines = lines[1:] // the first named the dataset
		}
		if len(lines) > 12 {
			lines = lines[:12]
		}
		for _, line := range lines {
			name, value, hasValue := strings.Cut(line, "=")
			if !slices.Contains(names, name) {
				name = names[cliFuzzHash(name, len(names))]
			}
			switch name {
			case "dataset":
				value, hasValue = cliFuzzPick(value, datasets, alias), true
				tiny = slices.Contains(datasets[1:8], value)
			case "data-dir":
				if cliFuzzHash(value, 3) == 0 && shared != "" {
					value = shared
				}
			case "trace":
				value, hasValue = filepath.Join(dir, "trace"+strconv.Itoa(cliFuzzHash(value, 3))+".jsonl"), true
			case "cpuprofile", "out":
				continue // no other command writes files
			}
			if cliFuzzWorkFlag(name) {
				if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil && !(v <= 16) {
					small = false
				}
			}
			if hasValue {
				args = append(args, "--"+name+"="+value)
			} else {
				args = append(args, "--"+name)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		if sel&0x80 == 0 || !small || !tiny {
			cancel()
		}
		defer cancel()
		root.SetArgs(args)
		err = root.ExecuteContext(ctx)
		t.Logf("%q (trained: %v): %v", args, ctx.Err() == nil, err)
		if err == nil {
			return
		}
		msg := err.Error()
		switch {
		case strings.TrimSpace(msg) == "":
			t.Fatalf("%q: empty error", args)
		case strings.Contains(msg, "\n"):
			t.Fatalf("%q: error spans several lines: %q", args, msg)
		case out.Len() > 0:
			t.Fatalf("%q failed (%v) and wrote to stdout: %q", args, err, out.String())
		}
	})
}
