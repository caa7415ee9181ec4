package graphs

import "slices"

// Stats summarises a graph (dpgnn data info).
type Stats struct {
	// Nodes is N.
	Nodes int `json:"nodes"`
	// UndirectedEdges counts unordered pairs {i, j}, i ≠ j, with an entry
	// of Adj in either direction.
	UndirectedEdges int `json:"undirected_edges"`
	// DirectedEntries is the number of stored entries of Adj (self-loops
	// included).
	DirectedEntries int `json:"directed_entries"`
	// Features is the feature dimension (0 without features).
	Features int `json:"features"`
	// Classes is NumClasses.
	Classes int `json:"classes"`
	// Degrees are taken in the undirected view: the degree of i is the
	// number of j ≠ i joined to i in either direction (self-loops excluded),
	// so that Σ degrees = 2·UndirectedEdges and MeanDegree = 2E/N.
	MinDegree  int     `json:"min_degree"`
	MaxDegree  int     `json:"max_degree"`
	MeanDegree float64 `json:"mean_degree"`
	// Isolated counts the nodes of degree 0.
	Isolated int `json:"isolated"`
	// SelfLoops counts the stored diagonal entries of Adj.
	SelfLoops int `json:"self_loops"`
	// Homophily is the edge homophily: the fraction of stored non-self-loop
	// entries (i, j) of Adj with Labels[i] == Labels[j], over the entries
	// whose endpoints are both labelled (label ≥ 0); 0 when there are none.
	Homophily float64 `json:"homophily"`
}

// ComputeStats computes the statistics of g's positive adjacency Adj.
func ComputeStats(g *Graph) Stats {
	s := Stats{Nodes: g.N, Classes: g.NumClasses}
	if g.X != nil {
		s.Features = g.X.F
	}
	if g.Adj == nil || g.N == 0 {
		s.Isolated = g.N
		return s
	}
	a := g.Adj
	s.DirectedEntries = a.NNZ()
	same, counted := 0, 0
	for i := 0; i < a.Rows; i++ {
		for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
			j := a.Indices[k]
			if j == i {
				s.SelfLoops++
				continue
			}
			if i < len(g.Labels) && j < len(g.Labels) && g.Labels[i] >= 0 && g.Labels[j] >= 0 {
				counted++
				if g.Labels[i] == g.Labels[j] {
					same++
				}
			}
		}
	}
	if counted > 0 {
		s.Homophily = float64(same) / float64(counted)
	}
	var sym *CSR
	switch {
	case a.Rows == a.Cols && patternSymmetric(a):
		sym = a // a loaded graph: its undirected view is itself (no copy)
	case a.Rows == a.Cols:
		sym = Symmetrize(&CSR{Rows: a.Rows, Cols: a.Cols, Indptr: a.Indptr, Indices: a.Indices})
	default:
		sym = a // not an adjacency; report row counts
	}
	s.MinDegree = -1
	total := 0
	for i := 0; i < g.N; i++ {
		d := 0
		if i < sym.Rows {
			for k := sym.Indptr[i]; k < sym.Indptr[i+1]; k++ {
				if sym.Indices[k] != i {
					d++
				}
			}
		}
		total += d
		if s.MinDegree < 0 || d < s.MinDegree {
			s.MinDegree = d
		}
		s.MaxDegree = max(s.MaxDegree, d)
		if d == 0 {
			s.Isolated++
		}
	}
	s.UndirectedEdges = total / 2
	s.MeanDegree = float64(total) / float64(g.N)
	return s
}

// patternSymmetric reports, without allocating, whether the square m has
// sorted rows without repeated ids and an entry (j, i) for every entry
// (i, j): then m's rows are already its undirected view.
func patternSymmetric(m *CSR) bool {
	if !m.Canonical() {
		return false
	}
	for i := 0; i < m.Rows; i++ {
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			j := m.Indices[k]
			row := m.Indices[m.Indptr[j]:m.Indptr[j+1]]
			if _, ok := slices.BinarySearch(row, i); !ok {
				return false
			}
		}
	}
	return true
}
