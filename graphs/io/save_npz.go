package graphio

import (
	"errors"
	"fmt"
	"io"

	"github.com/sbinet/npyio/npz"
	"gonum.org/v1/gonum/mat"

	"github.com/dpgnn/dpgnn/graphs"
)

// SaveNPZ writes g to path in the "sparsegraph" npz format that LoadNPZ
// reads (cora.npz's key spelling):
//
//   - adj_data (float64), adj_indices, adj_indptr (int64), adj_shape
//     (int64, [N, N]): g.Adj as stored (its values, or ones when Data is nil);
//   - sparse features as attr_data (float64), attr_indices, attr_indptr,
//     attr_shape (int64); dense features as one 2-D float64 array
//     attr_matrix (N×F, C order). A dense matrix with N·F = 0 is written in
//     the sparse form;
//   - labels (int64, length N).
//
// g must have Adj, X and Labels: LoadNPZ requires all three. Neg, the
// splits and the edge splits are not stored. Note that LoadNPZ returns the
// adjacency symmetrised, binarised and without self-loops, so a directed,
// weighted or self-looped Adj does not survive a round trip unchanged.
// The archive is written atomically (WriteFileAtomic): to a temporary file
// beside the target, renamed over it only when every write succeeded, so a
// failed save leaves no partial file behind and the old file, if any,
// unchanged. A symlink is written through to its target; a directory,
// device or other non-regular file is refused.
func SaveNPZ(path string, g *graphs.Graph) error {
	if err := checkSaveNPZ(g); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	err := WriteFileAtomic(path, func(out io.Writer) error {
		w := npz.NewWriter(out)
		err := writeSparseGraph(w, g)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

func checkSaveNPZ(g *graphs.Graph) error {
	switch {
	case g == nil:
		return errors.New("nil graph")
	case g.Adj == nil:
		return errors.New("graph has no adjacency")
	case g.Adj.Rows != g.N || g.Adj.Cols != g.N:
		return fmt.Errorf("adjacency is %d×%d but the graph has %d nodes", g.Adj.Rows, g.Adj.Cols, g.N)
	case g.X == nil:
		return errors.New("graph has no features (the npz format requires them)")
	case g.X.N != g.N:
		return fmt.Errorf("features have %d rows but the graph has %d nodes", g.X.N, g.N)
	case g.Labels == nil:
		return errors.New("graph has no labels (the npz format requires them)")
	case len(g.Labels) != g.N:
		return fmt.Errorf("graph has %d labels for %d nodes", len(g.Labels), g.N)
	}
	if err := g.Adj.Validate(); err != nil {
		return fmt.Errorf("adjacency: %w", err)
	}
	if g.X.Sparse != nil {
		if g.X.Sparse.Rows != g.X.N || g.X.Sparse.Cols != g.X.F {
			return fmt.Errorf("sparse features are %d×%d, want %d×%d", g.X.Sparse.Rows, g.X.Sparse.Cols, g.X.N, g.X.F)
		}
		if err := g.X.Sparse.Validate(); err != nil {
			return fmt.Errorf("features: %w", err)
		}
	} else if len(g.X.Dense) != g.X.N*g.X.F {
		return fmt.Errorf("dense features have %d values, want %d×%d", len(g.X.Dense), g.X.N, g.X.F)
	}
	return nil
}

func writeSparseGraph(w *npz.Writer, g *graphs.Graph) error {
	if err := writeCSRArrays(w, "adj", g.Adj); err != nil {
		return err
	}
	x := g.X
	if x.Sparse == nil && x.N*x.F == 0 {
		x = &graphs.Features{N: x.N, F: x.F, Sparse: &graphs.CSR{Rows: x.N, Cols: x.F, Indptr: make([]int, x.N+1)}}
	}
	if x.Sparse != nil {
		if err := writeCSRArrays(w, "attr", x.Sparse); err != nil {
			return err
		}
	} else {
		d := mat.NewDense(x.N, x.F, x.Dense)
		if err := w.Write("attr_matrix.npy", d); err != nil {
			return err
		}
	}
	labels := make([]int64, len(g.Labels))
	for i, l := range g.Labels {
		labels[i] = int64(l)
	}
	return w.Write("labels.npy", labels)
}

func writeCSRArrays(w *npz.Writer, prefix string, m *graphs.CSR) error {
	data := make([]float64, m.NNZ())
	for k := range data {
		data[k] = m.Value(k)
	}
	arrays := []struct {
		key string
		v   any
	}{
		{prefix + "_data.npy", data},
		{prefix + "_indices.npy", intsTo64(m.Indices)},
		{prefix + "_indptr.npy", intsTo64(m.Indptr)},
		{prefix + "_shape.npy", []int64{int64(m.Rows), int64(m.Cols)}},
	}
	for _, a := range arrays {
		if err := w.Write(a.key, a.v); err != nil {
			return err
		}
	}
	return nil
}

func intsTo64(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
