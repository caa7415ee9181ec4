// Package all registers every dpgnn method; import it for its side effect.
package all

import (
	_ "github.com/dpgnn/dpgnn/methods/asgl"    // register asgl
	_ "github.com/dpgnn/dpgnn/methods/caribou" // register caribou
	_ "github.com/dpgnn/dpgnn/methods/dpar"    // register dpar
	_ "github.com/dpgnn/dpgnn/methods/gap"     // register gap
	_ "github.com/dpgnn/dpgnn/methods/gcn"     // register gcn
	_ "github.com/dpgnn/dpgnn/methods/gcon"    // register gcon
	_ "github.com/dpgnn/dpgnn/methods/mlp"     // register mlp
	_ "github.com/dpgnn/dpgnn/methods/progap"  // register progap
	_ "github.com/dpgnn/dpgnn/methods/sage"    // register sage
)
