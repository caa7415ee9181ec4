package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/spf13/cobra"
)

func newDataCmd(stdout io.Writer) *cobra.Command {
	data := &cobra.Command{
		Use:   "data",
		Short: "Dataset statistics and synthetic graph generation",
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
			var g *graphs.Graph
			if kind == "csbm" {
				if err := cfg.Validate(); err != nil {
					return err
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
	f.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "csbm: number of nodes")
	f.IntVar(&cfg.Classes, "classes", cfg.Classes, "csbm: number of classes")
	f.IntVar(&cfg.Features, "features", cfg.Features, "csbm: feature dimension")
	f.Float64Var(&cfg.AvgDegree, "avg-degree", cfg.AvgDegree, "csbm: expected average degree")
	f.Float64Var(&cfg.Homophily, "homophily", cfg.Homophily, "csbm: fraction of intra-class edges")
	f.Float64Var(&cfg.Signal, "signal", cfg.Signal, "csbm: distance of class means in feature space")
	data.AddCommand(info, gen)
	return data
}
