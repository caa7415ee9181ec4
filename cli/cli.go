// Package cli is the dpgnn command line as a library: train, sweep,
// account, audit, inspect, tune, reproduce and data for every registered
// method. cmd/dpgnn is Main with the built-in methods (methods/all); a
// researcher's own main package builds a dpgnn-compatible binary for the
// built-in methods plus their own with
//
//	import (
//		_ "github.com/dpgnn/dpgnn/methods/all" // the built-in methods (optional)
//		"github.com/dpgnn/dpgnn/cli"
//	)
//
//	func main() { cli.Main(func() methods.Method { return NewMyMethod() }) }
//
// with no edit inside the framework (examples/ holds one, built by its
// test). The commands' privacy claims are the methods' own: the CLI
// states each method's plan and ledger and adds no release of its own,
// except tune's covered selection, whose score rules exist only for the
// built-in methods (tune refuses a covered selection for any other).
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

	"github.com/dpgnn/dpgnn/methods"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Main runs the dpgnn command line of os.Args with the methods registered
// so far (by the imports of the main package, e.g. methods/all) plus one
// method per factory of ms, and exits the process with the command's
// status: 0, 1 on an error (printed as one line "dpgnn: ..." on standard
// error), 2 when ms cannot be registered (a name already taken, a
// malformed configuration struct), 128+N when signal N ended it. Each
// factory returns a fresh method holding its default configuration; every
// command calls it anew, as methods.Register documents.
func Main(ms ...func() methods.Method) {
	if err := Register(ms...); err != nil {
		fmt.Fprintln(os.Stderr, "dpgnn:", err)
		os.Exit(2)
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// Register adds the methods of the factories ms to the registry the
// commands read (methods.Register), after checking what would otherwise
// panic there: a nil factory or method, a name that is empty, already
// registered (a built-in's included) or given twice, and a configuration
// struct methods.BindConfig cannot bind; each is an error naming the
// method, and nothing is registered. Once they are registered, it builds
// every command once and returns, as an error, the panic of a method flag
// that clashes with a command's own (pflag's "flag redefined: seed"); the
// methods then stay registered, so a caller that gets an error must not
// run the commands (Main exits).
func Register(ms ...func() methods.Method) error {
	taken := map[string]bool{}
	for _, n := range methods.Names() {
		taken[n] = true
	}
	reserved := commandFlags()
	for i, f := range ms {
		if f == nil {
			return fmt.Errorf("method %d of cli.Main is a nil factory", i+1)
		}
		m := f()
		if m == nil {
			return fmt.Errorf("method %d of cli.Main: its factory returned nil", i+1)
		}
		name := m.Name()
		switch {
		case name == "":
			return fmt.Errorf("method %d of cli.Main (%T) has an empty name", i+1, m)
		case taken[name]:
			return fmt.Errorf("method %q (%T) is registered twice: the name is taken (known: %s)", name, m, strings.Join(methods.Names(), ", "))
		}
		taken[name] = true
		if err := checkConfig(m); err != nil {
			return fmt.Errorf("method %q (%T): %w", name, m, err)
		}
		own := configFlags(m.Config())
		for _, f := range own {
			if where, ok := reserved[f]; ok {
				return fmt.Errorf("method %q (%T): its flag --%s is one of %s's own: rename the field's flag tag", name, m, f, where)
			}
		}
	}
	for _, f := range ms {
		methods.Register(f)
	}
	if len(ms) == 0 {
		return nil
	}
	return checkCommands()
}

// commandFlags maps each flag that a per-method command (train METHOD,
// inspect METHOD, audit METHOD, ...) defines itself, beside the method's
// configuration, to that command's path: the names a method's flag must
// not take. It learns them from the registered methods' commands, so it
// is empty when none is registered (Register's build of the commands
// then catches a clash).
func commandFlags() map[string]string {
	reserved := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if m, err := methods.New(c.Name()); err == nil && c.HasParent() {
			own := map[string]bool{}
			for _, f := range configFlags(m.Config()) {
				own[f] = true
			}
			c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
				if _, seen := reserved[f.Name]; !seen && !own[f.Name] {
					reserved[f.Name] = c.Parent().CommandPath() + " METHOD"
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
	return reserved
}

// configFlags lists the flags of a method's configuration (a config
// checkConfig accepted).
func configFlags(cfg any) []string {
	fs := pflag.NewFlagSet("config", pflag.ContinueOnError)
	methods.BindConfig(fs, cfg)
	var out []string
	fs.VisitAll(func(f *pflag.Flag) { out = append(out, f.Name) })
	return out
}

// checkCommands builds the command tree, turning a panic (a method flag
// defined twice on one command) into an error.
func checkCommands() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("a method's flags clash with a command's own: %v (rename the method's flag tag)", r)
		}
	}()
	newRoot(io.Discard, io.Discard)
	return nil
}

// checkConfig binds m's configuration to a throw-away flag set, turning
// the panic methods.BindConfig raises on a malformed struct (an unknown
// field type, a field without a flag tag, a flag defined twice) into an
// error.
func checkConfig(m methods.Method) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("its configuration struct cannot be bound to flags: %v", r)
		}
	}()
	methods.BindConfig(pflag.NewFlagSet(m.Name(), pflag.ContinueOnError), m.Config())
	return nil
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
