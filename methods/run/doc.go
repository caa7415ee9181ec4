// Package run runs dpgnn's methods: the driver that loads a dataset,
// applies the split, runs a method for several seeds and summarises the
// results into the JSON record (Train, Check, NewContext), the tasks a
// method is trained and evaluated for (node classification, link and
// edge-sign prediction), model selection, and the privacy machinery every
// method shares — δ's rules (ResolveDelta, DeltaUse), the one plan-level
// calibration (Calibrate: a noise multiplier for the releases a method
// declares, searched by dp.CalibrateNoise) and its Calibrated plan, the
// report a run publishes (Report, with the uses of private data it lists).
// It also holds what methods build from: the Module every multi-module
// method trains (with its monitoring Watch and the Evaluator of queries),
// the run prologue and epilogue (Begin, Finish), queries (NewQuery,
// Inference), audit targets (AuditTarget, SGDAudit), the runs an attack
// trains (AttackRuns) and plans from counts (Accountable, Counts) for
// `dpgnn account`. DP-SGD over declared examples is MakePrivate (plan,
// calibration, construction, recording) and, for a method that is only
// that, SGDMethod: from the method's Plan and Build it derives Run and
// what inspect, account and audit need (sgdmethod.go).
//
// It imports methods (the Method interface, Context and Outcome a run
// passes and receives); methods never imports it.
//
// # Model wrappers
//
// A method's model sits in up to three wrappers; none can stand in for
// another, so each stays. nn.Model is the engine's: the parameters, the
// expression graph and the machines that run it — every model is one, and
// nothing above it may reach into gorgonia. Module (here) is the
// framework's node classifier over one or more row inputs, built from a
// body function: its DP-SGD or full-batch training path over a batch of
// rows, its evaluation path over every node, its training loop with model
// selection and monitoring, its query Evaluator. GAP, ProGAP, CARIBOU,
// MLP and GCON's encoder are a Module and write only their bodies; a
// method whose training samples are not node rows keeps its own struct
// around an nn.Model instead — DPAR's net (an example is a row of Π
// aggregated over its neighbours' rows), ASGL's GAN players (pairs of
// walk nodes), gcn's row-selection paths — because folding those into
// Module would make it carry every method's sample shape, and a Module
// with a shape switch would be three types in one.
package run
