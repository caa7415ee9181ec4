package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/io"
	"github.com/spf13/cobra"
)

func newDataCmd(stdout io.Writer) *cobra.Command {
	data := &cobra.Command{
		Use:   "data",
		Short: "Dataset statistics, synthetic graph generation, dataset downloads",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for \"dpgnn data\" (want info, generate or fetch)", args[0])
			}
			return cmd.Help()
		},
	}
	var dataDir, infoMaxMemory string
	var asJSON bool
	var seed uint64
	info := &cobra.Command{
		Use:   "info NAME|PATH",
		Short: "Print a dataset's statistics (nodes, edges, features, classes, degrees, homophily)",
		Long: "Print a dataset's statistics after loading (adjacency symmetrised, self-loops dropped).\nNames: " +
			strings.Join(graphio.DatasetNames(), ", "),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := setMaxMemory(infoMaxMemory); err != nil {
				return err
			}
			g, err := graphio.Load(args[0], dataDir, seed)
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
	info.Flags().StringVar(&dataDir, "data-dir", graphio.DefaultDataDir(), "directory where dataset names resolve ($DPGNN_DATA, else ./data)")
	info.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	info.Flags().Uint64Var(&seed, "seed", 1, "seed for generated datasets")
	info.Flags().StringVar(&infoMaxMemory, "max-memory", "", maxMemoryHelp)

	var cfg gen.CSBMConfig = gen.DefaultCSBM()
	var kind, out, maxMem string
	var gseed uint64
	// csbmFlags set a csbm's configuration: a chain refuses them
	csbmFlags := []string{"nodes", "classes", "features", "avg-degree", "homophily", "signal", "float32"}
	gen := &cobra.Command{
		Use:   "generate --out FILE.npz [flags]",
		Short: "Write a synthetic graph (csbm or chain-s/m/l/x) as an npz sparsegraph file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("generate needs --out FILE.npz")
			}
			// Refuse a bad output path before spending time generating.
			if _, err := graphio.OutputPath(out); err != nil {
				return fmt.Errorf("--out %s: %w", out, err)
			}
			if _, err := setMaxMemory(maxMem); err != nil {
				return err
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
				g = gen.CSBM(cfg, gseed)
			} else if strings.HasPrefix(kind, "chain-") {
				for _, name := range csbmFlags {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s is a csbm setting; --kind %s is one of CARIBOU's chains, whose size and features are fixed", name, kind)
					}
				}
				var err error
				if g, err = gen.Chain(strings.TrimPrefix(kind, "chain-"), gseed); err != nil {
					return err
				}
			} else {
				return fmt.Errorf("unknown --kind %q (want csbm or chain-s|m|l|x)", kind)
			}
			if err := graphio.SaveNPZ(out, g); err != nil {
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
	f.StringVar(&maxMem, "max-memory", "", maxMemoryHelp)
	f.Uint64Var(&gseed, "seed", 1, "random seed")
	f.Var(countValue{&cfg.Nodes}, "nodes", "csbm: number of nodes (e.g. 2000 or 1e5)")
	f.Var(countValue{&cfg.Classes}, "classes", "csbm: number of classes")
	f.Var(countValue{&cfg.Features}, "features", "csbm: feature dimension")
	f.Float64Var(&cfg.AvgDegree, "avg-degree", cfg.AvgDegree, "csbm: expected average degree")
	f.Float64Var(&cfg.Homophily, "homophily", cfg.Homophily, "csbm: fraction of intra-class edges")
	f.Float64Var(&cfg.Signal, "signal", cfg.Signal, "csbm: distance of class means in feature space")
	f.BoolVar(&cfg.Float32, "float32", false, "csbm: round the features to float32, as PyG's and the papers' dataset files hold them (GCN then gathers them at half the memory traffic, same arithmetic)")
	gen.Long = "Write a synthetic graph (csbm or chain-s/m/l/x) as an npz sparsegraph file.\n\n" +
		"A csbm config whose estimated memory (8·nodes·features + 100 per edge + 64 per node bytes)\n" +
		"exceeds the limit (--max-memory, else $" + graphs.MemoryLimitEnv + ", else 16 GB) is refused before anything is allocated.\n" +
		"The file is written atomically (a temporary file renamed over --out); a symlink is written\n" +
		"through to its target; a directory, device or other non-regular --out is refused."

	var fetchDir, mirror string
	var force bool
	fetch := &cobra.Command{
		Use:   "fetch NAME|all",
		Short: "Download a dataset's published files and verify their SHA-256",
		Long: "Download the published files of a dataset (or of every one: `all`) into the data\n" +
			"directory (--data-dir, $DPGNN_DATA, else ./data), in the layout dpgnn reads:\n\n" +
			"  cora, cora_ml, citeseer   DIR/NAME.npz (sparsegraph npz)\n" +
			"  actor                     DIR/actor/ (out1_graph_edges.txt, out1_node_feature_label.txt,\n" +
			"                            film_split_0.6_0.2_0.npz ... _9.npz)\n" +
			"  bitcoin_alpha, bitcoin_otc, slashdot, wikirfa\n" +
			"                            DIR/signed/NAME/ (whole_edge.txt, NAME.train, NAME.test)\n\n" +
			"Each file comes from its authors' GitHub repository, pinned to a commit\n" +
			"(" + graphio.SourceBase + "/OWNER/REPO/COMMIT/PATH), and is kept only\n" +
			"if its size and SHA-256 match the ones dpgnn lists: it is streamed to a temporary\n" +
			"file beside its target and renamed into place, so a failed or interrupted download\n" +
			"leaves no partial file behind (files verified before it stay). A download that\n" +
			"receives nothing for " + strconv.FormatFloat(graphio.DefaultFetchStall.Seconds(), 'f', -1, 64) + " s is abandoned. Files already there with the right\n" +
			"SHA-256 are skipped; a file there with another SHA-256 is refused, before anything\n" +
			"is downloaded, unless --force. One line per file goes to standard error, one line\n" +
			"per dataset to standard output.\n\n" +
			"--mirror (or $" + graphio.MirrorEnv + ") replaces " + graphio.SourceBase + " in every URL.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Ctrl-C cancels the download, which removes its temporary file.
			interruptible.Store(true)
			res, err := graphio.Fetch(cmd.Context(), args[0], fetchDir, graphio.FetchOptions{
				Mirror: mirror, Force: force, Progress: cmd.ErrOrStderr(),
			})
			if err != nil {
				return fmt.Errorf("data fetch %s: %w", args[0], err)
			}
			for _, r := range res {
				path, _ := graphio.DatasetPath(r.Name, fetchDir)
				if r.Downloaded == 0 {
					fmt.Fprintf(stdout, "%s: up to date in %s\n", r.Name, path)
				} else {
					fmt.Fprintf(stdout, "%s: downloaded %d of %d files (%d bytes) into %s\n", r.Name, r.Downloaded, r.Files, r.Bytes, path)
				}
			}
			return nil
		},
	}
	fetch.Flags().StringVar(&fetchDir, "data-dir", graphio.DefaultDataDir(), "directory where dataset names resolve ($DPGNN_DATA, else ./data)")
	fetch.Flags().StringVar(&mirror, "mirror", graphio.DefaultMirror(), "base URL that replaces "+graphio.SourceBase+" ($"+graphio.MirrorEnv+")")
	fetch.Flags().BoolVar(&force, "force", false, "replace files that are there with another SHA-256")
	data.AddCommand(info, gen, fetch)
	return data
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
