// Package methods is the contract between dpgnn and its training methods:
// the Method interface and the registry (Register, New, Names), what a
// method receives for one run (Context: the split graph, the privacy
// level, ε, the δ rule, the selection mode, the seed and the run's ledger
// and noise source) and what it returns (Outcome, with the query cost
// type QueryCost its queries are charged to), and the configuration
// machinery with its field checks. It computes nothing about a run:
// running one — the driver, splits, tasks, calibration and privacy plans,
// reports, the Module every multi-module method trains, queries, audit
// and attack targets, plans from counts — is methods/run, which imports
// this package; this package imports neither run nor any method. Context,
// Outcome and QueryCost live here and not in run because Method.Run takes
// and returns them: run needs Method, so Method's signature cannot name a
// type of run.
//
// Each method lives in its own sub-package (mlp, gcn, gap, progap, gcon,
// ...), wires layers, dp and methods/run together and registers itself by
// name in an init function; import methods/all to register every one.
//
// # Configuration
//
// The package owns the configuration machinery every method uses. A
// method's configuration is a struct of its hyperparameters, one field
// each, tagged with the field's flag name and help text:
//
//	type Config struct {
//		Hidden int     `flag:"hidden" help:"hidden width"`
//		LR     float64 `flag:"lr" help:"Adam learning rate"`
//	}
//
// The method's package gives its defaults in one function (DefaultConfig by
// convention) and Method.Config returns a pointer to the method's own
// Config. Everything else is derived from the struct by reflection: the
// command-line flags (BindConfig, defaults taken from the fields' current
// values), the record's hyperparameters (ConfigValues), sweep settings
// (SetConfig) and the names in validation errors (CheckFields with its
// checks: Positive, Width, Epochs, OneOf, Require, ...), which read
// "Hidden (--hidden) must be in [1, 65536], got 0".
//
// Tags: `flag:"name"` (required on every exported field; `flag:"-"` skips
// one), `help:"text"` (the flag's usage; Go string escapes such as \n
// work) and `hidden:"true"` (a flag that parses but is left out of
// --help). Field types: int, int64, uint64, float64, string, bool, []int
// and []float64. An embedded struct (exported, untagged) contributes its
// fields in place, so a group of hyperparameters several methods share is
// declared once, with its own defaults. Unexported fields are ignored (a
// method may keep derived state there). Anything else — another type, an
// exported field without a flag tag, a flag name used twice — is a
// programming error: the functions panic, and Register binds every
// method's configuration at init so that a malformed one fails at once.
package methods
