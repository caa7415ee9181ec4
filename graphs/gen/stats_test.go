package gen_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
)

func mustGraph(g *graphs.Graph, err error) *graphs.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// TestStatsJSON: chain-s's statistics as `dpgnn data info` prints them.
func TestStatsJSON(t *testing.T) {
	b, err := json.Marshal(graphs.ComputeStats(mustGraph(gen.Chain("s", 1))))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"nodes":48`, `"undirected_edges":42`, `"directed_entries":84`, `"features":5`,
		`"classes":2`, `"min_degree":1`, `"max_degree":2`, `"mean_degree":1.75`, `"isolated":0`, `"self_loops":0`, `"homophily":1`} {
		if !strings.Contains(string(b), key) {
			t.Fatalf("JSON %s lacks %s", b, key)
		}
	}
}
