package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// argv is the process's command line when dpgnn runs as a program (set by
// main); nil when the commands run inside a test.
var argv []string

// versionString is what `dpgnn --version` prints after "dpgnn version ":
// the module version and the commit the binary was built from
// (trainers.BuildInfo: the VCS stamp, a pseudo-version's revision or the
// link-time trainers.LinkedCommit). A build that carries none says so, and
// how to get one: its records state the commit "unknown".
func versionString() string {
	version, commit := trainers.BuildInfo()
	if commit == "" {
		return fmt.Sprintf("%s, commit %s (the build carries no VCS stamp, so records say commit %q: build from a git checkout without -buildvcs=false, "+
			"or stamp it with -ldflags \"-X github.com/dpgnn/dpgnn/trainers.LinkedCommit=$(git rev-parse HEAD)\")",
			version, trainers.UnknownCommit, trainers.UnknownCommit)
	}
	return fmt.Sprintf("%s, commit %s", version, commit)
}

// commandLine is the command line a record names as its origin: the
// process's arguments as run (the program by its base name), or, when the
// command was not started from os.Args (tests), the command path with the
// flags that were set and the positional arguments. Arguments that a shell
// would split or expand are single-quoted, so the line can be pasted back.
func commandLine(cmd *cobra.Command, args []string) string {
	var words []string
	if len(argv) > 0 {
		words = append([]string{filepath.Base(argv[0])}, argv[1:]...)
	} else {
		words = strings.Fields(cmd.CommandPath())
		cmd.Flags().Visit(func(f *pflag.Flag) {
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				for _, v := range sv.GetSlice() {
					words = append(words, "--"+f.Name, v)
				}
				return
			}
			if f.Value.Type() == "bool" && f.Value.String() == "true" {
				words = append(words, "--"+f.Name)
				return
			}
			words = append(words, "--"+f.Name, f.Value.String())
		})
		words = append(words, args...)
	}
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellQuote single-quotes s when a POSIX shell would not read it back as
// one word unchanged.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=+@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
