package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// runFields are what a sweep's per-run record adds to the record of
// 'train --json' (which it holds for one run: runs 1, seeds [seed]): the
// run's place in its sweep and the options that shape a run without being
// hyperparameters of the method. A record without Run is a per-cell record
// (several runs summarised, as 'train --json' writes them).
type runFields struct {
	// Run is the run's index r in its sweep and SweepSeed the sweep's
	// --seed: the run has seed SweepSeed + r, draws its split as run r of
	// 'train --runs' does, and a generated dataset comes from SweepSeed.
	Run       *int    `json:"run,omitempty"`
	SweepSeed *uint64 `json:"sweep_seed,omitempty"`
	// DeltaSetting is --delta as set (auto, paper or the number), Selection
	// --selection and SelectionEpsilon --selection-epsilon.
	DeltaSetting     string  `json:"delta_setting,omitempty"`
	Selection        string  `json:"selection,omitempty"`
	SelectionEpsilon float64 `json:"selection_epsilon,omitempty"`
}

// runRecord is a record as a sweep writes it: one run.
type runRecord struct {
	*trainers.Record
	runFields
}

// sweepRecord is a record with where it came from (file and line, or the
// running sweep) and its bytes as read or written.
type sweepRecord struct {
	*trainers.Record
	runFields
	raw   []byte
	where string
}

// parseRecord reads one JSON line: a per-run record of a sweep or a
// per-cell record ('train --json', older sweeps).
func parseRecord(line []byte, where string) (*sweepRecord, error) {
	rr := runRecord{Record: &trainers.Record{}}
	if err := json.Unmarshal(line, &rr); err != nil {
		return nil, fmt.Errorf("%s: not a dpgnn JSON record: %v", where, err)
	}
	r := &sweepRecord{Record: rr.Record, runFields: rr.runFields, raw: line, where: where}
	if len(r.Metrics) == 0 || r.Method == "" {
		return nil, fmt.Errorf("%s: record has no method or metrics", where)
	}
	if r.isRun() {
		if r.Runs != 1 || len(r.Seeds) > 1 || len(r.Seeds) == 1 && r.Seeds[0] != r.Seed {
			return nil, fmt.Errorf("%s: a per-run record (it has \"run\") must hold one run, got runs %d, seeds %v", where, r.Runs, r.Seeds)
		}
		if r.SweepSeed == nil || *r.Run < 0 || *r.SweepSeed+uint64(*r.Run) != r.Seed {
			return nil, fmt.Errorf("%s: a per-run record's seed must be sweep_seed + run, got seed %d, run %d", where, r.Seed, *r.Run)
		}
	}
	return r, nil
}

// isRun reports a per-run record.
func (r *sweepRecord) isRun() bool { return r.Run != nil }

// eps is the record's budget, +Inf for null.
func (r *sweepRecord) eps() float64 {
	if r.Epsilon == nil {
		return math.Inf(1)
	}
	return *r.Epsilon
}

// seeds are the record's run seeds (derived from seed and runs for records
// written before they were listed).
func (r *sweepRecord) seeds() []uint64 {
	if len(r.Seeds) > 0 {
		return r.Seeds
	}
	out := make([]uint64, r.Runs)
	for i := range out {
		out[i] = r.Seed + uint64(i)
	}
	return out
}

// cell names the record's table cell with its level and seeds.
func (r *sweepRecord) cell() string {
	return fmt.Sprintf("%s at ε=%s (%s, split %s, privacy %s, seeds %s)", r.Method, fmtEps(r.Epsilon), r.Dataset, r.Split, r.Privacy, seedText(r.seeds()))
}

// run names the record's run.
func (r *sweepRecord) run() string {
	return fmt.Sprintf("%s at ε=%s, seed %d (%s, split %s, privacy %s)", r.Method, fmtEps(r.Epsilon), r.Seed, r.Dataset, r.Split, r.Privacy)
}

// seedText is a list of seeds, a run of consecutive ones as "a–b".
func seedText(s []uint64) string {
	if len(s) == 0 {
		return "none"
	}
	consecutive := true
	for i := 1; i < len(s); i++ {
		consecutive = consecutive && s[i] == s[i-1]+1
	}
	if len(s) > 1 && consecutive {
		return fmt.Sprintf("%d–%d", s[0], s[len(s)-1])
	}
	t := make([]string, len(s))
	for i, v := range s {
		t[i] = fmt.Sprint(v)
	}
	return strings.Join(t, ",")
}

type cellKey struct {
	method string
	eps    float64
}

// runKey names one run of a sweep: a per-run record is identified by its
// method, its ε column (+Inf for none) and its seed.
type runKey struct {
	method string
	eps    float64
	seed   uint64
}

func (r *sweepRecord) cellKey() cellKey { return cellKey{r.Method, r.eps()} }
func (r *sweepRecord) runKey() runKey   { return runKey{r.Method, r.eps(), r.Seed} }

// recordSet holds the records of one table and refuses those that do not
// belong in it: another dataset (by name, or by fingerprint when both
// records carry one), another split, another private level; for per-cell
// records a second record for a (method, ε) cell; for per-run records a
// second record of a run, or a record whose method configuration
// (hyperparameters, --delta, --selection, --secure-noise) differs from
// another per-run record of that method. A cell is filled by one per-cell
// record or by per-run records, not both. A byte-identical copy of a
// record is counted once, with a warning.
type recordSet struct {
	list     []*sweepRecord
	cells    map[cellKey]*sweepRecord // per-cell records
	runs     map[runKey]*sweepRecord  // per-run records
	runCells map[cellKey]*sweepRecord // the first per-run record of each cell
	configs  map[string]*sweepRecord  // the first per-run record of each method
	// free are the per-run records at a finite ε that read no private
	// data, by method and seed: each fills the method's finite columns.
	free map[string]map[uint64]*sweepRecord
	// paid are the methods with a per-run record at a finite ε that read
	// private data.
	paid    map[string]bool
	first   *sweepRecord // the dataset and split of the table
	printed *sweepRecord // the first with a dataset fingerprint
	private *sweepRecord // the first at a private level
	warn    io.Writer
}

func newRecordSet(warn io.Writer) *recordSet {
	return &recordSet{cells: map[cellKey]*sweepRecord{}, runs: map[runKey]*sweepRecord{}, runCells: map[cellKey]*sweepRecord{},
		configs: map[string]*sweepRecord{}, free: map[string]map[uint64]*sweepRecord{}, paid: map[string]bool{}, warn: warn}
}

// errIdentical marks a byte-identical repeat of a record in the set.
var errIdentical = errors.New("identical record")

// checkTable reports whether r's dataset, data, split and privacy level
// are the table's.
func (s *recordSet) checkTable(r *sweepRecord) error {
	if f := s.first; f != nil {
		if r.Dataset != f.Dataset {
			return fmt.Errorf("%s is on dataset %s but %s is on %s: records of different datasets cannot share one table",
				r.where, r.Dataset, f.where, f.Dataset)
		}
		if r.Split != f.Split {
			return fmt.Errorf("%s has split %s but %s has %s: records of different splits cannot share one table",
				r.where, r.Split, f.where, f.Split)
		}
	}
	if f := s.printed; f != nil && r.DatasetFingerprint != "" && r.DatasetFingerprint != f.DatasetFingerprint {
		return fmt.Errorf("%s and %s are both on %s but on different data (dataset fingerprints %.12s… and %.12s…): records of different data cannot share one table",
			r.where, f.where, r.Dataset, r.DatasetFingerprint, f.DatasetFingerprint)
	}
	if f := s.private; f != nil && r.Privacy != string(methods.None) && r.Privacy != f.Privacy {
		return fmt.Errorf("%s is at %s level but %s at %s level: records of different privacy levels cannot share one table",
			r.where, r.Privacy, f.where, f.Privacy)
	}
	return nil
}

// check reports whether r may join the set (errIdentical for a
// byte-identical repeat).
func (s *recordSet) check(r *sweepRecord) error {
	if err := s.checkTable(r); err != nil {
		return err
	}
	if r.isRun() {
		return s.checkRun(r)
	}
	if o, ok := s.runCells[r.cellKey()]; ok {
		return fmt.Errorf("%s is a record of %d run(s) for the cell %s at ε=%s, which %s fills run by run: keep one kind",
			r.where, r.Runs, r.Method, fmtEps(r.Epsilon), o.where)
	}
	o, ok := s.cells[r.cellKey()]
	if !ok {
		return nil
	}
	if bytes.Equal(r.raw, o.raw) {
		return errIdentical
	}
	if r.Privacy == o.Privacy && slices.Equal(r.seeds(), o.seeds()) {
		return fmt.Errorf("duplicate records for %s: %s and %s differ; keep one", r.cell(), o.where, r.where)
	}
	return fmt.Errorf("%s and %s both fill the cell %s at ε=%s, with different runs (privacy %s, seeds %s vs privacy %s, seeds %s); keep one",
		o.where, r.where, r.Method, fmtEps(r.Epsilon), o.Privacy, seedText(o.seeds()), r.Privacy, seedText(r.seeds()))
}

// checkRun is check for a per-run record.
func (s *recordSet) checkRun(r *sweepRecord) error {
	if o, ok := s.cells[r.cellKey()]; ok {
		return fmt.Errorf("%s is a record of %d run(s) for the cell %s at ε=%s, which %s fills run by run: keep one kind",
			o.where, o.Runs, r.Method, fmtEps(r.Epsilon), r.where)
	}
	if o, ok := s.configs[r.Method]; ok {
		if d := configDiff(r, o); d != "" {
			return fmt.Errorf("%s and %s are runs of %s with different configurations (%s): one table holds one configuration per method",
				r.where, o.where, r.Method, d)
		}
	}
	o, ok := s.runs[r.runKey()]
	if !ok {
		return nil
	}
	if bytes.Equal(r.raw, o.raw) {
		return errIdentical
	}
	if *r.Run != *o.Run {
		return fmt.Errorf("%s and %s both hold %s, as run %d of --seed %d and as run %d of --seed %d; keep one",
			o.where, r.where, r.run(), *o.Run, *o.SweepSeed, *r.Run, *r.SweepSeed)
	}
	return fmt.Errorf("duplicate records for %s: %s and %s differ; keep one", r.run(), o.where, r.where)
}

// add puts r into the set, or reports why it does not belong there; a
// byte-identical repeat is dropped with a warning (added is then false).
func (s *recordSet) add(r *sweepRecord) (added bool, err error) {
	if err := s.check(r); err != nil {
		if errors.Is(err, errIdentical) {
			o := s.cells[r.cellKey()]
			if r.isRun() {
				o = s.runs[r.runKey()]
			}
			fmt.Fprintf(s.warn, "dpgnn: warning: %s repeats %s byte for byte (%s at ε=%s); counted once\n", r.where, o.where, r.Method, fmtEps(r.Epsilon))
			return false, nil
		}
		return false, err
	}
	if s.first == nil {
		s.first = r
	}
	if s.printed == nil && r.DatasetFingerprint != "" {
		s.printed = r
	}
	if s.private == nil && r.Privacy != string(methods.None) {
		s.private = r
	}
	s.list = append(s.list, r)
	if !r.isRun() {
		s.cells[r.cellKey()] = r
		return true, nil
	}
	s.runs[r.runKey()] = r
	if _, ok := s.runCells[r.cellKey()]; !ok {
		s.runCells[r.cellKey()] = r
	}
	if _, ok := s.configs[r.Method]; !ok {
		s.configs[r.Method] = r
	}
	if !math.IsInf(r.eps(), 1) && !isFree(r.Record) {
		s.paid[r.Method] = true
	}
	if isFree(r.Record) && !math.IsInf(r.eps(), 1) {
		if s.free[r.Method] == nil {
			s.free[r.Method] = map[uint64]*sweepRecord{}
		}
		if _, ok := s.free[r.Method][r.Seed]; !ok {
			s.free[r.Method][r.Seed] = r
		}
	}
	return true, nil
}

// covers returns the record that gives the result of the run of method at
// ε = eps with seed seed: its own record, or at a finite ε a record of the
// same method and seed at another finite ε that read no private data (its
// result does not depend on ε); nil when there is none.
func (s *recordSet) covers(method string, eps float64, seed uint64) *sweepRecord {
	if r, ok := s.runs[runKey{method, eps, seed}]; ok {
		return r
	}
	if !math.IsInf(eps, 1) {
		return s.free[method][seed]
	}
	return nil
}

// configDiff describes how the method configurations of two per-run
// records differ ("" when they agree): hyperparameters, --delta,
// --selection, --selection-epsilon and --secure-noise.
func configDiff(a, b *sweepRecord) string {
	var d []string
	keys := slices.Sorted(maps.Keys(a.Hyperparameters))
	for k := range b.Hyperparameters {
		if _, ok := a.Hyperparameters[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		va, oka := a.Hyperparameters[k]
		vb, okb := b.Hyperparameters[k]
		if oka != okb || !reflect.DeepEqual(va, vb) {
			d = append(d, fmt.Sprintf("%s=%s vs %s", k, hpText(va, oka), hpText(vb, okb)))
		}
	}
	if a.DeltaSetting != b.DeltaSetting {
		d = append(d, fmt.Sprintf("--delta %s vs %s", a.DeltaSetting, b.DeltaSetting))
	}
	if a.Selection != b.Selection || a.SelectionEpsilon != b.SelectionEpsilon {
		d = append(d, fmt.Sprintf("--selection %s (ε %g) vs %s (ε %g)", a.Selection, a.SelectionEpsilon, b.Selection, b.SelectionEpsilon))
	}
	if a.SecureNoise != b.SecureNoise {
		d = append(d, fmt.Sprintf("--secure-noise %t vs %t", a.SecureNoise, b.SecureNoise))
	}
	if len(d) > 3 {
		d = append(d[:3], fmt.Sprintf("%d more", len(d)-3))
	}
	return strings.Join(d, ", ")
}

// hpText is a hyperparameter value as a record shows it, "unset" when the
// record has none.
func hpText(v any, ok bool) string {
	if !ok {
		return "unset"
	}
	if f, isF := v.(float64); isF {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// jsonValues is a map as it reads back from JSON (numbers as float64), so
// a configuration built in Go compares equal to one read from a record.
func jsonValues(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return m
	}
	return out
}

// isFree reports a run that read no private data (privacy report ε = 0,
// e.g. the feature-only MLP at edge level): its result holds at every ε.
func isFree(r *trainers.Record) bool {
	p := r.PrivacyReport
	return p != nil && p.Epsilon != nil && *p.Epsilon == 0
}
