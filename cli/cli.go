// Command dpgnn trains and evaluates differentially private graph neural
// networks, accounts for their privacy, and inspects their expression
// graphs. Run `dpgnn --help` for the commands.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	_ "github.com/dpgnn/dpgnn/methods/all" // register every method
	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// stopSignals end a command as Ctrl-C does: SIGINT, and SIGTERM, which a
// batch system sends at a job's time limit (Slurm, then SIGKILL after its
// KillWait) and kill sends by default.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// run runs the command of args (args[0] is the program) with main's
// signal handling, profiles and exit status, and returns that status.
// The first SIGINT or SIGTERM ends the context: train, sweep and reproduce
// stop and print what finished; any other command stops at once with
// "dpgnn: interrupted (SIGNAL)". A second one ends the process either way
// (the signal's default action).
func run(args []string, stdoutFile, stderr *os.File) int {
	profile, err := startCPUProfile(os.Getenv(cpuProfileEnv))
	if err != nil {
		fmt.Fprintln(stderr, "dpgnn:", err)
		return 1
	}
	times, err := startOpTimes(os.Getenv(opTimesEnv))
	if err != nil {
		profile.stop(false)
		fmt.Fprintln(stderr, "dpgnn:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, stopSignals...)
	defer signal.Stop(signals)
	var received atomic.Value // the os.Signal that ended the context
	go func() {
		sig, ok := <-signals
		if !ok {
			return
		}
		signal.Reset(stopSignals...)
		received.Store(sig)
		if !interruptible.Load() {
			for _, err := range []error{profile.stop(true), times.stop(true)} {
				if err != nil {
					fmt.Fprintln(stderr, "dpgnn:", err)
				}
			}
			fmt.Fprintf(stderr, "dpgnn: interrupted (%s)\n", signalName(sig))
			os.Exit(signalStatus(sig))
		}
		cancel()
	}()
	argv = args
	stdout := &checkedWriter{w: stdoutFile, name: "standard output"}
	root := newRoot(stdout, stderr)
	root.SetArgs(args[1:])
	err = root.ExecuteContext(ctx)
	if err == nil {
		err = stdout.err
	}
	status := exitStatus(err)
	if sig, ok := received.Load().(os.Signal); ok && status == 130 {
		status = signalStatus(sig)
	}
	if err != nil {
		fmt.Fprintln(stderr, "dpgnn:", err)
	}
	for _, perr := range []error{profile.stop(status != 1), times.stop(status != 1)} {
		if perr != nil {
			fmt.Fprintln(stderr, "dpgnn:", perr)
			if status == 0 {
				status = 1
			}
		}
	}
	return status
}

// signalStatus is the exit status of a command a signal ended: 128 plus
// its number, as a shell reports it (130 for SIGINT, 143 for SIGTERM).
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// signalName is "SIGINT", "SIGTERM", ...
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// checkedWriter remembers the first error of a write (a full disk, a
// closed pipe, /dev/full), so a command whose output was lost fails
// instead of exiting 0.
type checkedWriter struct {
	w    io.Writer
	name string
	err  error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("writing to %s: %w", c.name, err)
	}
	return n, err
}

// interruptible is set by the commands that stop cleanly when their
// context ends (train, sweep, reproduce); run then cancels the context on
// SIGINT or SIGTERM instead of exiting.
var interruptible atomic.Bool

// exitStatus is the process's exit status after a command returned err:
// 0, 130 (128 + SIGINT) when it was interrupted (run makes it 143 when
// SIGTERM was the cause), else 1.
func exitStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

// interruptedError is a command's report of an interruption: its message
// says what finished and what was kept; it wraps the cause
// (context.Canceled).
type interruptedError struct {
	msg   string
	cause error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.cause }

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
	// Declared here rather than by cobra at execution: cobra's command
	// lookup then knows --version takes no value, so `dpgnn --version
	// extra` is an unknown command instead of a version printed over it.
	root.Flags().BoolP("version", "v", false, "print the version and the commit dpgnn was built from")
	root.SetHelpCommand(newHelpCmd())
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newTrainCmd(stdout, stderr), newDataCmd(stdout), newAccountCmd(stdout), newInspectCmd(stdout), newSweepCmd(stdout, stderr), newAuditCmd(stdout, stderr), newTuneCmd(stdout, stderr), newReproduceCmd(stdout, stderr))
	return root
}

// newHelpCmd is `dpgnn help [COMMAND...]`: the help of the command the
// words name, or an error (exit 1) when they name none — cobra's own help
// command prints "Unknown help topic" and the usage, and exits 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help prints the help of a command: dpgnn help train gcn is dpgnn train gcn --help.",
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				parent, path := root, "dpgnn"
				if cmd != nil && err == nil {
					parent, path = cmd, cmd.CommandPath()
				}
				var names []string
				for _, sub := range parent.Commands() {
					if sub.IsAvailableCommand() && sub.Name() != "help" {
						names = append(names, sub.Name())
					}
				}
				return fmt.Errorf("help %s: %s has no command %q (commands: %s)", strings.Join(args, " "), path, firstUnknown(args, rest), strings.Join(names, ", "))
			}
			return cmd.Help()
		},
	}
}

// firstUnknown is the first word of a help topic that names no command:
// the first of rest, the words a lookup left over, else the last word.
func firstUnknown(args, rest []string) string {
	if len(rest) > 0 {
		return rest[0]
	}
	return args[len(args)-1]
}
