package all_test

import (
	"math"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/methods"
	_ "github.com/dpgnn/dpgnn/methods/all"
	"github.com/dpgnn/dpgnn/methods/internal/methodtest"
	"github.com/dpgnn/dpgnn/trainers"
	"gonum.org/v1/gonum/floats"
)

// epochClock is a Recorder that notes when each epoch is reported. It
// does not keep statistics (KeepsStats is false), so a loop does exactly
// the work of a run without a trace.
type epochClock struct {
	mu  sync.Mutex
	at  []time.Time
	cpu []time.Duration // the process's CPU time (user and system)
	ep  []int
}

func (c *epochClock) KeepsStats() bool         { return false }
func (c *epochClock) Plan(int)                 {}
func (c *epochClock) Step(trainers.EpochStats) {}
func (c *epochClock) Done()                    {}
func (c *epochClock) Epoch(s trainers.EpochStats) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	c.mu.Lock()
	c.at, c.cpu, c.ep = append(c.at, time.Now()), append(c.cpu, cpu), append(c.ep, s.Epoch)
	c.mu.Unlock()
}

// stages is, for each of a run's stages (a stage restarts the epoch
// count), the median time between consecutive epoch reports: the
// steady-state time of one epoch of that stage, without set-up, the
// stages' one-off work or the final prediction; cpu is the same of the
// process's CPU time (all cores), which time stolen by other tenants of a
// shared machine does not inflate.
func (c *epochClock) stages() (wall, cpu []float64) {
	var gaps, cgaps []float64
	median := func(x []float64) float64 {
		slices.Sort(x)
		return x[len(x)/2]
	}
	flush := func() {
		if len(gaps) > 0 {
			wall, cpu = append(wall, median(gaps)), append(cpu, median(cgaps))
		}
		gaps, cgaps = gaps[:0], cgaps[:0]
	}
	for i := 1; i < len(c.at); i++ {
		if c.ep[i] != c.ep[i-1]+1 {
			flush()
			continue
		}
		gaps = append(gaps, c.at[i].Sub(c.at[i-1]).Seconds())
		cgaps = append(cgaps, (c.cpu[i] - c.cpu[i-1]).Seconds())
	}
	flush()
	return wall, cpu
}

// BenchmarkEpochFile reports the steady-state seconds per epoch ("s/epoch":
// the median time between epochs, summed over a method's stages; and
// "cpu-s/epoch", the same of the process's CPU time) of whole
// `dpgnn train` runs on the graph in the npz file $DPGNN_BENCH_GRAPH (e.g.
// a 10⁵- or 10⁶-node graph from `dpgnn data generate`), split
// ratio:0.1:0.2, with 21 epochs per stage: docs/performance.md's scale
// table. GAP runs in its paper's setting (K = 2, width 16, no dropout),
// ProGAP with its defaults, DP-MLP at node level with ε = 8, δ = 1e-7.
// Skipped without the variable.
//
//	DPGNN_BENCH_GRAPH=csbm1m.npz go test ./methods/all -run '^$' -bench EpochFile -benchtime 1x
func BenchmarkEpochFile(b *testing.B) {
	g := methodtest.Split(b, methodtest.BenchGraph(b), "ratio:0.1:0.2")
	path := os.Getenv(methodtest.BenchGraphEnv)
	for _, tc := range []struct {
		name, method string
		level        methods.Level
		eps          float64
		args         []string
	}{
		{"gcn", "gcn", methods.None, math.Inf(1), nil},
		{"gap-edge", "gap", methods.Edge, 1, []string{"--encoder-epochs", "21", "--hops", "2", "--hidden", "16",
			"--weight-decay", "0", "--dropout", "0", "--input-dropout", "0"}},
		{"progap-edge", "progap", methods.Edge, 1, nil},
		{"dpmlp-node", "mlp", methods.Node, 8, nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m, err := methods.New(tc.method)
			if err != nil {
				b.Fatal(err)
			}
			methodtest.Configure(b, m, append([]string{"--epochs", "21"}, tc.args...)...)
			var per, perCPU []float64
			for i := 0; i < b.N; i++ {
				clock := &epochClock{}
				ctx := &methods.Context{Graph: g, Dataset: path, Level: tc.level, Epsilon: tc.eps, Seed: uint64(i + 1), Recorder: clock}
				if tc.level == methods.Node {
					ctx.Delta, ctx.DeltaRule = 1e-7, methods.DeltaGiven
				}
				if _, err := m.Run(ctx); err != nil {
					b.Fatal(err)
				}
				wall, cpu := clock.stages()
				b.Logf("run %d: %d epoch reports, medians per stage %.4f s, CPU %.4f s", i+1, len(clock.at), wall, cpu)
				per, perCPU = append(per, floats.Sum(wall)), append(perCPU, floats.Sum(cpu))
			}
			slices.Sort(per)
			slices.Sort(perCPU)
			b.ReportMetric(per[len(per)/2], "s/epoch")
			b.ReportMetric(perCPU[len(perCPU)/2], "cpu-s/epoch")
		})
	}
}
