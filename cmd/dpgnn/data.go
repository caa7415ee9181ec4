package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/spf13/cobra"
)

func newDataCmd(stdout io.Writer) *cobra.Command {
	data := &cobra.Command{
		Use:   "data",
		Short: "Dataset statistics, synthetic graph generation, where dataset files go",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"dpgnn data\" (want info, generate or fetch)", args[0])
			}
			return cmd.Help()
		},
	}
	var dataDir string
	var asJSON bool
	var seed uint64
	info := &cobra.Command{
		Use:   "info NAME|PATH",
		Short: "Print a dataset's statistics (nodes, edges, features, classes, degrees, homophily)",
		Long: "Print a dataset's statistics after loading (adjacency symmetrised, self-loops dropped).\nNames: " +
			strings.Join(graphs.DatasetNames(), ", "),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := graphs.Load(args[0], dataDir, seed)
			if err != nil {
				return err
			}
			st := graphs.ComputeStats(g)
			if asJSON {
				return json.NewEncoder(stdout).Encode(map[string]any{"dataset": g.Name, "stats": st})
			}
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "dataset\t%s\n", g.Name)
			fmt.Fprintf(tw, "nodes\t%d\n", st.Nodes)
			fmt.Fprintf(tw, "undirected edges\t%d\n", st.UndirectedEdges)
			fmt.Fprintf(tw, "directed entries\t%d\n", st.DirectedEntries)
			fmt.Fprintf(tw, "features\t%d\n", st.Features)
			fmt.Fprintf(tw, "classes\t%d\n", st.Classes)
			fmt.Fprintf(tw, "degree min/max/mean\t%d / %d / %.2f\n", st.MinDegree, st.MaxDegree, st.MeanDegree)
			fmt.Fprintf(tw, "isolated nodes\t%d\n", st.Isolated)
			fmt.Fprintf(tw, "self-loops\t%d\n", st.SelfLoops)
			fmt.Fprintf(tw, "edge homophily\t%.4f\n", st.Homophily)
			if g.Signed() {
				neg := graphs.ComputeStats(g.WithAdj(g.Neg))
				fmt.Fprintf(tw, "negative edges\t%d\n", neg.UndirectedEdges)
			}
			if len(g.MaskSplits) > 0 {
				s := g.MaskSplits[0]
				fmt.Fprintf(tw, "published splits\t%d (first: %d train / %d val / %d test)\n", len(g.MaskSplits), len(s.Train), len(s.Val), len(s.Test))
			}
			return tw.Flush()
		},
	}
	info.Flags().StringVar(&dataDir, "data-dir", graphs.DefaultDataDir(), "directory where dataset names resolve ($DPGNN_DATA, else ./data)")
	info.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	info.Flags().Uint64Var(&seed, "seed", 1, "seed for generated datasets")

	var cfg graphs.CSBMConfig = graphs.DefaultCSBM()
	var kind, out string
	var gseed uint64
	gen := &cobra.Command{
		Use:   "generate --out FILE.npz [flags]",
		Short: "Write a synthetic graph (csbm or chain-s/m/l/x) as an npz sparsegraph file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("generate needs --out FILE.npz")
			}
			// Refuse a bad output path before spending time generating.
			if _, err := graphs.OutputPath(out); err != nil {
				return fmt.Errorf("--out %s: %w", out, err)
			}
			var g *graphs.Graph
			if kind == "csbm" {
				if err := cfg.Validate(); err != nil {
					return err
				}
				if err := cfg.CheckMemory(); err != nil {
					return err
				}
				if math.Round(float64(cfg.Nodes)*cfg.AvgDegree/2) < 1 {
					return fmt.Errorf("csbm: %d nodes with average degree %v give no edges, and a graph without edges does not load; raise --avg-degree", cfg.Nodes, cfg.AvgDegree)
				}
				g = graphs.CSBM(cfg, gseed)
			} else if strings.HasPrefix(kind, "chain-") {
				var err error
				if g, err = graphs.Chain(strings.TrimPrefix(kind, "chain-"), gseed); err != nil {
					return err
				}
			} else {
				return fmt.Errorf("unknown --kind %q (want csbm or chain-s|m|l|x)", kind)
			}
			if err := graphs.SaveNPZ(out, g); err != nil {
				return err
			}
			st := graphs.ComputeStats(g)
			fmt.Fprintf(stdout, "wrote %s: %d nodes, %d undirected edges, %d features, %d classes, homophily %.3f\n",
				out, st.Nodes, st.UndirectedEdges, st.Features, st.Classes, st.Homophily)
			return nil
		},
	}
	f := gen.Flags()
	f.StringVar(&kind, "kind", "csbm", "csbm or chain-s|m|l|x")
	f.StringVar(&out, "out", "", "output .npz file")
	f.Uint64Var(&gseed, "seed", 1, "random seed")
	f.Var(countValue{&cfg.Nodes}, "nodes", "csbm: number of nodes (e.g. 2000 or 1e5)")
	f.Var(countValue{&cfg.Classes}, "classes", "csbm: number of classes")
	f.Var(countValue{&cfg.Features}, "features", "csbm: feature dimension")
	f.Float64Var(&cfg.AvgDegree, "avg-degree", cfg.AvgDegree, "csbm: expected average degree")
	f.Float64Var(&cfg.Homophily, "homophily", cfg.Homophily, "csbm: fraction of intra-class edges")
	f.Float64Var(&cfg.Signal, "signal", cfg.Signal, "csbm: distance of class means in feature space")
	gen.Long = "Write a synthetic graph (csbm or chain-s/m/l/x) as an npz sparsegraph file.\n\n" +
		"A csbm config whose estimated memory (8·nodes·features + 100 per edge + 64 per node bytes)\n" +
		"exceeds the limit (16 GB, or $" + graphs.MemoryLimitEnv + ") is refused before anything is allocated.\n" +
		"The file is written atomically (a temporary file renamed over --out); a symlink is written\n" +
		"through to its target; a directory, device or other non-regular --out is refused."

	var fetchDir string
	fetch := &cobra.Command{
		Use:   "fetch NAME",
		Short: "Where a dataset's files go (this build cannot download them)",
		Long: "This build of dpgnn cannot download datasets. Put the published files in the data\n" +
			"directory (--data-dir, $DPGNN_DATA, else ./data) in this layout:\n\n" +
			"  cora, cora_ml, citeseer   DIR/NAME.npz (sparsegraph npz)\n" +
			"  actor                     DIR/actor/ (out1_graph_edges.txt, out1_node_feature_label.txt,\n" +
			"                            film_split_0.6_0.2_0.npz ... _9.npz)\n" +
			"  bitcoin_alpha, bitcoin_otc, slashdot, wikirfa\n" +
			"                            DIR/signed/NAME/ (whole_edge.txt, NAME.train, NAME.test)\n\n" +
			"`data fetch NAME` says where NAME's files go and where they are published, and exits\n" +
			"non-zero unless they are already there.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return fetchHelp(stdout, args[0], fetchDir)
		},
	}
	fetch.Flags().StringVar(&fetchDir, "data-dir", graphs.DefaultDataDir(), "directory where dataset names resolve ($DPGNN_DATA, else ./data)")
	data.AddCommand(info, gen, fetch)
	return data
}

// fetchHelp is `data fetch NAME`: this build cannot download, so it says
// where the files go (an error), or that they are already there.
func fetchHelp(stdout io.Writer, name, dataDir string) error {
	help, ok := graphs.DatasetHelp(name, dataDir)
	if !ok {
		if slices.Contains(graphs.DatasetNames(), strings.ToLower(name)) {
			return fmt.Errorf("data fetch %s: %s is generated by dpgnn, there is nothing to fetch", name, name)
		}
		var files []string
		for _, n := range graphs.DatasetNames() {
			if _, ok := graphs.DatasetPath(n, "."); ok {
				files = append(files, n)
			}
		}
		return fmt.Errorf("data fetch %s: unknown dataset (datasets read from files: %s)", name, strings.Join(files, ", "))
	}
	key := strings.ToLower(name)
	path, _ := graphs.DatasetPath(key, dataDir)
	if _, err := os.Stat(path); err == nil {
		g, err := graphs.Load(key, dataDir, 1)
		if err != nil {
			return fmt.Errorf("data fetch %s: fetching is not available in this build, and the files at %s do not load: %w", name, path, err)
		}
		fmt.Fprintf(stdout, "%s is already in place at %s (%d nodes)\n", key, path, g.N)
		return nil
	}
	return fmt.Errorf("data fetch %s: fetching is not available in this build (dpgnn cannot download datasets); %s, or point --data-dir or $DPGNN_DATA at the directory that holds it",
		name, help)
}

// countValue is an int flag that also accepts a whole number written in
// scientific notation ("1e5"), as users of sizes type it.
type countValue struct{ p *int }

func (c countValue) String() string {
	if c.p == nil {
		return "0"
	}
	return strconv.Itoa(*c.p)
}

func (c countValue) Set(s string) error {
	if v, err := strconv.Atoi(s); err == nil {
		*c.p = v
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) {
		return fmt.Errorf("want a whole number (such as 2000 or 1e5)")
	}
	if math.Abs(f) >= math.MaxInt64 {
		return fmt.Errorf("%s is out of range", s)
	}
	*c.p = int(f)
	return nil
}

func (c countValue) Type() string { return "int" }
