package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// Command returns a fresh dpgnn command tree (the root "dpgnn" command and
// all its subcommands), writing to stdout and stderr, over the methods
// registered so far. SetArgs and Execute run one command in-process, as
// Main does without the process around it (no signal handling, no exit
// status); Find reaches a subcommand to read its flags. Each call builds
// a new tree, so no flag value carries over from one run to the next.
// It exists for tools and tests that run or parse dpgnn commands in
// another package (cli/docstest runs every README and docs command).
func Command(stdout, stderr io.Writer) *cobra.Command { return newRoot(stdout, stderr) }
