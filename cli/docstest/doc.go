// Package docstest holds no code: its tests check that the README and the
// reference docs describe the dpgnn that exists. They run every command
// of README.md and docs/cli.md as printed (TestREADMECommands) and every
// dpgnn command of docs/results.md, performance.md, privacy.md and
// extending.md shortened to one run and one epoch (TestDocsCommands), each
// in-process through cli.Command with the built-in methods, failing on an
// error, a missing output file or a --json run that prints more than one
// JSON value; `go` and Python commands are checked without running. They
// also check that every ```go block of docs/extending.md is an excerpt of
// a file go test runs (TestExtendingGoBlocks) and that the pages stay as
// short as issue 37 set them (TestDocsLengths).
//
// They live apart from package cli so that `go test ./...` runs them in
// their own test binary, in parallel with cli's tests, instead of adding
// their minutes to cli's under one package timeout. They need the real
// datasets (../shared/datasets beside the repository, or $DPGNN_DATA) and
// skip with a message without them.
package docstest
