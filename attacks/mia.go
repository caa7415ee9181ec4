package attacks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// DefaultPerClass is G-MIA's number of training nodes per class of the
// target and of the shadow model on Cora (its TSTF code: 90 per class, and
// 630 non-members each).
const DefaultPerClass = 90

// MIASplit is G-MIA's four-way node split: the target's and the shadow's
// training nodes (PerClass of each class each) and their non-members (as
// many as their training nodes, drawn from the rest), all disjoint.
type MIASplit struct {
	PerClass               int
	TargetTrain, TargetOut []int
	ShadowTrain, ShadowOut []int
}

// SplitMIA draws G-MIA's split of g's labelled nodes from seed. perClass 0
// picks G-MIA's 90, lowered until every class can give it to both models
// and the rest of the nodes can give both their non-members:
// min(90, ⌊smallest class/2⌋, ⌊labelled nodes/(4·classes)⌋).
func SplitMIA(g *graphs.Graph, perClass int, seed uint64) (*MIASplit, error) {
	if perClass < 0 {
		return nil, fmt.Errorf("--mia-per-class must be non-negative, got %d", perClass)
	}
	c := g.NumClasses
	byClass := make([][]int, c)
	var labelled []int
	for v, y := range g.Labels {
		if y >= 0 && y < c {
			byClass[y] = append(byClass[y], v)
			labelled = append(labelled, v)
		}
	}
	smallest := len(labelled)
	for _, b := range byClass {
		smallest = min(smallest, len(b))
	}
	if perClass == 0 {
		perClass = min(DefaultPerClass, smallest/2, len(labelled)/(4*c))
		if perClass < 1 {
			return nil, fmt.Errorf("G-MIA split: %d labelled nodes in %d classes (smallest %d) are too few for two models", len(labelled), c, smallest)
		}
	}
	if 2*perClass > smallest {
		return nil, fmt.Errorf("--mia-per-class %d: the smallest class has %d nodes, fewer than 2×%d", perClass, smallest, perClass)
	}
	rng := rand.New(rand.NewPCG(seed, 0x676d6961))
	s := &MIASplit{PerClass: perClass}
	used := make([]bool, g.N)
	for _, b := range byClass {
		b = slices.Clone(b)
		rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		s.TargetTrain = append(s.TargetTrain, b[:perClass]...)
		s.ShadowTrain = append(s.ShadowTrain, b[perClass:2*perClass]...)
		for _, v := range b[:2*perClass] {
			used[v] = true
		}
	}
	var rest []int
	for _, v := range labelled {
		if !used[v] {
			rest = append(rest, v)
		}
	}
	k := perClass * c
	if len(rest) < 2*k {
		return nil, fmt.Errorf("--mia-per-class %d: %d nodes are left for 2×%d non-members", perClass, len(rest), k)
	}
	rng.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	s.TargetOut, s.ShadowOut = rest[:k], rest[k:2*k]
	for _, l := range [][]int{s.TargetTrain, s.ShadowTrain, s.TargetOut, s.ShadowOut} {
		slices.Sort(l)
	}
	return s, nil
}

// TrainingSubgraph is the subgraph of g induced by the training nodes, all
// of them its training split (no validation or test node): what a TSTF
// model is trained on.
func TrainingSubgraph(g *graphs.Graph, train []int) *graphs.Graph {
	sub, _ := graphs.InducedSubgraph(g, train)
	all := make([]int, sub.N)
	for i := range all {
		all[i] = i
	}
	sub.Split = graphs.Split{Train: all}
	sub.MaskSplits = nil
	return sub
}

// Trainer trains the audited method on sub, the subgraph induced by one
// model's training nodes; role is "target" or "shadow".
type Trainer func(sub *graphs.Graph, role string) (*methods.Outcome, error)

// MIAConfig configures MIA.
type MIAConfig struct {
	// PerClass is the number of training nodes per class of each model
	// (0: SplitMIA's rule).
	PerClass int
	// Seed draws the split and trains the attack classifier.
	Seed uint64
	// Classifier is the attack model (zero value: DefaultClassifier).
	Classifier ClassifierConfig
	// Standardize scales each attack feature (the k-th largest posterior)
	// to zero mean and unit variance over the shadow's rows before the
	// classifier sees it, and the target's rows with the same statistics.
	// G-MIA's code feeds the raw sorted posteriors; a method whose
	// posteriors are nearly uniform (e.g. GCON's softmax of small linear
	// scores) then leaves the classifier nothing to learn at its
	// learning rate, and the attack fails rather than the model resisting it.
	Standardize bool
}

// MIAResult is the outcome of MIA.
type MIAResult struct {
	Split *MIASplit
	// AUC is the ROC AUC of the attack's member probabilities on the
	// target's training nodes against its non-members (0.5: chance).
	AUC float64
	// ShadowAUC is the same on the shadow's nodes, the classifier's own
	// training data (how well it learnt).
	ShadowAUC float64
	// MemberScores and NonMemberScores are the attack's scores of the
	// target's training nodes and non-members.
	MemberScores, NonMemberScores []float64
	// TargetTrainAcc and TargetOutAcc are the target's accuracy on its
	// training nodes and on its non-members, queried on the full graph
	// (the generalisation gap the attack feeds on).
	TargetTrainAcc, TargetOutAcc float64
	// Cost is the privacy cost of querying the target on the full graph
	// (one query), and Target the target's outcome (its privacy report).
	Cost   *methods.QueryCost
	Target *methods.Outcome
}

// MIA runs G-MIA (Olatunji et al. 2021) in the TSTF setting: the target is
// trained on the subgraph induced by its training nodes and queried once on
// the full graph g; a shadow model of the same method is trained the same
// way on the shadow's disjoint training nodes and queried on g; an attack
// classifier learns, from the shadow's posteriors sorted in decreasing
// order, its members from its non-members, and scores the target's
// members and non-members.
func MIA(g *graphs.Graph, train Trainer, cfg MIAConfig) (*MIAResult, error) {
	split, err := SplitMIA(g, cfg.PerClass, cfg.Seed)
	if err != nil {
		return nil, err
	}
	if cfg.Classifier.Epochs == 0 {
		cfg.Classifier = DefaultClassifier()
	}
	cfg.Classifier.Seed = cfg.Seed
	res := &MIAResult{Split: split}
	posteriors := func(role string, nodes []int) ([]float64, *methods.Outcome, *methods.QueryCost, error) {
		out, err := train(TrainingSubgraph(g, nodes), role)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s model: %w", role, err)
		}
		if out.QueryOn == nil {
			return nil, nil, nil, fmt.Errorf("mia: the method offers no queries")
		}
		q, cost, err := out.QueryOn(g)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s model on the full graph: %w", role, err)
		}
		p, err := q(g.X)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s model on the full graph: %w", role, err)
		}
		return p, out, cost, nil
	}
	pt, target, cost, err := posteriors("target", split.TargetTrain)
	if err != nil {
		return nil, err
	}
	res.Target, res.Cost = target, cost
	ps, _, _, err := posteriors("shadow", split.ShadowTrain)
	if err != nil {
		return nil, err
	}
	c := g.NumClasses
	rows := func(p []float64, nodes []int) [][]float64 {
		out := make([][]float64, len(nodes))
		for k, v := range nodes {
			r := slices.Clone(p[v*c : (v+1)*c])
			sort.Sort(sort.Reverse(sort.Float64Slice(r)))
			out[k] = r
		}
		return out
	}
	var x [][]float64
	var y []int
	for _, r := range rows(ps, split.ShadowTrain) {
		x, y = append(x, r), append(y, 1)
	}
	for _, r := range rows(ps, split.ShadowOut) {
		x, y = append(x, r), append(y, 0)
	}
	if cfg.Standardize {
		scale := standardizer(x)
		inner := rows
		rows = func(p []float64, nodes []int) [][]float64 {
			rs := inner(p, nodes)
			for _, r := range rs {
				scale(r)
			}
			return rs
		}
		for _, r := range x {
			scale(r)
		}
	}
	clf, err := TrainClassifier(x, y, cfg.Classifier)
	if err != nil {
		return nil, err
	}
	score := func(rs [][]float64) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = clf.Score(r)
		}
		return out
	}
	res.ShadowAUC = trainers.AUC(score(rows(ps, split.ShadowTrain)), score(rows(ps, split.ShadowOut)))
	res.MemberScores = score(rows(pt, split.TargetTrain))
	res.NonMemberScores = score(rows(pt, split.TargetOut))
	res.AUC = trainers.AUC(res.MemberScores, res.NonMemberScores)
	pred := trainers.Argmax(pt, g.N, c)
	res.TargetTrainAcc = trainers.Accuracy(pred, g.Labels, split.TargetTrain)
	res.TargetOutAcc = trainers.Accuracy(pred, g.Labels, split.TargetOut)
	return res, nil
}

// standardizer returns the map r ↦ (r − mean)/std, column by column, with
// the means and standard deviations of the rows x (a column without
// spread is only centred).
func standardizer(x [][]float64) func(r []float64) {
	d := len(x[0])
	mean, std := make([]float64, d), make([]float64, d)
	for _, r := range x {
		for j, v := range r {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(len(x))
	}
	for _, r := range x {
		for j, v := range r {
			std[j] += (v - mean[j]) * (v - mean[j])
		}
	}
	for j := range std {
		std[j] = math.Sqrt(std[j] / float64(len(x)))
		if !(std[j] > 0) {
			std[j] = 1
		}
	}
	return func(r []float64) {
		for j := range r {
			r[j] = (r[j] - mean[j]) / std[j]
		}
	}
}
