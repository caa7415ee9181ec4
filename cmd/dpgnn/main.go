// Command dpgnn trains and evaluates differentially private graph neural
// networks, accounts for their privacy, and inspects their expression
// graphs. Run `dpgnn --help` for the commands.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"

	_ "github.com/dpgnn/dpgnn/methods/all" // register every method
	"github.com/spf13/cobra"
)

func main() {
	// DPGNN_CPUPROFILE=FILE writes a CPU profile of the whole command.
	if p := os.Getenv("DPGNN_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	// Ctrl-C: say so and what is kept, then exit 130 (128 + SIGINT).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	go func() {
		<-stop
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "dpgnn: interrupted; records a sweep has written to --out are kept, the run in progress is lost")
		os.Exit(130)
	}()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dpgnn:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run() error {
	argv = os.Args
	return newRoot(os.Stdout, os.Stderr).Execute()
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dpgnn",
		Short: "Differentially private graph neural networks",
		Long: `dpgnn trains graph neural networks with differential privacy and compares
published private methods, with privacy accounting that never under-reports ε.

Without --dataset, every command uses an embedded synthetic graph (a
contextual stochastic block model), so no files are needed to try it:

  dpgnn train gcn
  dpgnn train mlp --runs 5 --json
  dpgnn data info cora --data-dir ../shared/datasets`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints the module version and the commit.
		Version: versionString(),
	}
	root.SetVersionTemplate("dpgnn version {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newTrainCmd(stdout, stderr), newDataCmd(stdout), newAccountCmd(stdout), newInspectCmd(stdout), newSweepCmd(stdout, stderr), newAuditCmd(stdout, stderr))
	return root
}
