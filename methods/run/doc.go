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
// `dpgnn account`.
//
// It imports methods (the Method interface, Context and Outcome a run
// passes and receives); methods never imports it.
package run
