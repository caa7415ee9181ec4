// Package trainers owns dpgnn's training loops and their bookkeeping: the
// full-batch loop with best-validation restore, metrics (accuracy, AUC,
// F1, signed-graph SSI), repeated seeded
// runs summarised by mean, standard deviation and a bootstrap 95% interval,
// progress reporting through the Recorder interface (a progress bar and a
// JSON-lines trace are two implementations), and the JSON result record of
// the CLI contract.
package trainers
