// Package graphs owns graph data for dpgnn: the Graph type with its CSR
// adjacency, dense or sparse features, labels and index splits; CSR
// algebra (products, transposes, row selection); transforms (symmetrise,
// self-loops, induced subgraphs, node and edge removal for neighbouring
// inputs, held-out edges); splits; normalised adjacencies; the memory
// limit every graph-sized allocation is checked against; and dataset
// statistics. (Personalised PageRank by ISTA, used only by DPAR, lives in
// methods/dpar.)
//
// Everything here is pure data and algebra: transforms return new values
// and never mutate their inputs. Splits that leave no training or no test
// node are errors; legal but doubtful input (a class without training
// nodes) is reported on Warnings.
//
// Its subpackages: graphs/io (graphio) loads, saves and fetches datasets;
// graphs/gen generates synthetic and adversarial graphs; graphs/walk is
// ASGL's signed BFS trees and walks; graphs/degree is the node-level
// degree bound every method uses; graphs/graphstest holds test fixtures.
package graphs
