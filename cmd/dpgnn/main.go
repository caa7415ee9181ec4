// Command dpgnn trains and evaluates differentially private graph neural
// networks, accounts for their privacy, and inspects their expression
// graphs. Run `dpgnn --help` for the commands.
//
// It is cli.Main with the built-in methods (methods/all); a binary with
// methods of your own beside them is the same few lines (see package cli
// and examples/).
package main

import (
	"github.com/dpgnn/dpgnn/cli"
	_ "github.com/dpgnn/dpgnn/methods/all" // register every built-in method
)

func main() { cli.Main() }
