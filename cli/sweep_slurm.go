package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/graphs/io"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// emitSlurm writes the sbatch script of a sweep as a Slurm job array: one
// array task per shard, each running this sweep's command with --shard
// $SLURM_ARRAY_TASK_ID/N, the dpgnn binary, --out, --data-dir and any
// path-valued flag made absolute (the tasks may start in another
// directory, on another node). The tasks append to the same results file
// and the one that completes the grid writes the table; submitting the
// script again trains only what is missing.
func emitSlurm(stdout, stderr io.Writer, cmd *cobra.Command, f *sweepFlags, plan *sweepPlan, out *sweepOut) error {
	if out == nil || out.dir == "" {
		return fmt.Errorf("--emit slurm needs --out DIR (a directory, not a .jsonl file): the array tasks merge their runs and write the table there")
	}
	grid := len(plan.runs())
	shards := f.shards
	switch {
	case shards < 0:
		return fmt.Errorf("--shards must be positive, got %d", shards)
	case shards == 0:
		shards = grid
	}
	bin, err := dpgnnBinary(f.dpgnn)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(out.dir)
	if err != nil {
		return fmt.Errorf("--out %s: %w", out.flag, err)
	}
	for _, o := range f.sbatch {
		if strings.ContainsAny(o, "\n\r") {
			return fmt.Errorf("--sbatch %q: one option per line", o)
		}
	}
	words := []string{shellQuote(bin), "sweep"}
	var flagErr error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "emit", "emit-out", "shards", "dpgnn", "sbatch", "shard", "out", "data-dir":
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+fl.Name, shellQuote(v))
			}
			return
		}
		v := fl.Value.String()
		switch fl.Name {
		case "plot":
			v, flagErr = absFlag("plot", v, flagErr)
		case "dataset":
			if !slices.Contains(graphio.DatasetNames(), strings.ToLower(v)) {
				if _, err := os.Stat(v); err == nil {
					v, flagErr = absFlag("dataset", v, flagErr)
				}
			}
		}
		if fl.Value.Type() == "bool" {
			words = append(words, "--"+fl.Name+"="+v)
			return
		}
		words = append(words, "--"+fl.Name, shellQuote(v))
	})
	if flagErr != nil {
		return flagErr
	}
	dataDir, err := absFlag("data-dir", f.d.dataDir, nil)
	if err != nil {
		return err
	}
	words = append(words, "--data-dir", shellQuote(dataDir), "--out", shellQuote(dir), "--shard", fmt.Sprintf(`"${SLURM_ARRAY_TASK_ID}/%d"`, shards))
	if err := os.MkdirAll(dir, 0o755); err != nil { // Slurm writes the tasks' logs there
		return fmt.Errorf("--out %s: %w", out.flag, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "# A dpgnn sweep as a Slurm job array (written by 'dpgnn sweep --emit slurm').\n")
	fmt.Fprintf(&b, "# Task I of %d trains the runs k of the grid's %d (in the order method, ε, seed)\n", shards, grid)
	fmt.Fprintf(&b, "# with k mod %d = I and appends their records to %s;\n", shards, filepath.Join(dir, sweepResultsFile))
	fmt.Fprintf(&b, "# the task that completes the grid writes %s and %s.\n", sweepTableFile, sweepPlotFile)
	fmt.Fprintf(&b, "# Submitting this script again trains only the runs not recorded yet.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=dpgnn-sweep\n")
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", shards-1)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(dir, "slurm-%A_%a.out"))
	if f.workers > 1 {
		fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", f.workers)
	}
	for _, o := range f.sbatch {
		fmt.Fprintf(&b, "#SBATCH %s\n", strings.TrimSpace(o))
	}
	fmt.Fprintf(&b, "set -euo pipefail\n")
	fmt.Fprintf(&b, "exec %s\n", strings.Join(words, " "))
	if f.emitOut == "" {
		_, err := io.WriteString(stdout, b.String())
		return err
	}
	if err := graphio.WriteFileAtomic(f.emitOut, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err }); err != nil {
		return fmt.Errorf("--emit-out %s: %w", f.emitOut, err)
	}
	fmt.Fprintf(stderr, "sweep: wrote %s: %d array tasks for %d runs; submit it with: sbatch %s\n", f.emitOut, shards, grid, f.emitOut)
	return nil
}

// dpgnnBinary is the absolute path of the dpgnn binary the script runs:
// --dpgnn PATH, or the running executable — unless that is a temporary
// build of 'go run' or 'go test', which is gone by the time the job runs.
func dpgnnBinary(flag string) (string, error) {
	if flag != "" {
		p, err := filepath.Abs(flag)
		if err != nil {
			return "", fmt.Errorf("--dpgnn %s: %w", flag, err)
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("--dpgnn %s: %w", flag, err)
		}
		if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("--dpgnn %s: not an executable file", flag)
		}
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("--emit slurm: cannot tell where this dpgnn is (%v); pass --dpgnn PATH", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") || strings.HasSuffix(filepath.Base(exe), ".test") {
		return "", fmt.Errorf("--emit slurm: this dpgnn is a temporary build (%s, from go run or go test); build one (go build -o dpgnn ./cmd/dpgnn, or your own main package that calls cli.Main) or pass --dpgnn PATH", exe)
	}
	return exe, nil
}

// absFlag is a path-valued flag's value made absolute (prev: an earlier
// error, kept).
func absFlag(name, v string, prev error) (string, error) {
	if prev != nil {
		return v, prev
	}
	p, err := filepath.Abs(v)
	if err != nil {
		return v, fmt.Errorf("--%s %s: %w", name, v, err)
	}
	return p, nil
}
