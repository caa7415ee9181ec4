#!/usr/bin/env python3
"""Feature-only and linear-stack baselines on Cora, to check which split the
CARIBOU paper's Cora numbers come from (docs/results.md, session 4).

Not run by CI. Needs numpy, scipy and scikit-learn (Debian: python3-numpy
python3-scipy python3-sklearn). Splits are stratified like dpgnn's
ratio:TRAIN:0.2 (its own RNG, so not the same nodes).

  protocol_check.py maxlr   [--train 0.1]   best-case LR accuracy (max over seeds and C)
  protocol_check.py stack   [--train 0.7]   LR on cross-fitted probabilities + noisy aggregates
  protocol_check.py knnbase [--train 0.1]   LR on features propagated over a cosine k-NN graph
"""
import argparse

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize

p = argparse.ArgumentParser()
p.add_argument('what', choices=['maxlr', 'stack', 'knnbase'])
p.add_argument('--data', default='../shared/datasets/cora.npz')
p.add_argument('--train', type=float, default=None)
p.add_argument('--runs', type=int, default=3)
a = p.parse_args()

z = np.load(a.data, allow_pickle=True)
X = sp.csr_matrix((z['attr_data'], z['attr_indices'], z['attr_indptr']), shape=z['attr_shape']).astype(float)
A = sp.csr_matrix((z['adj_data'], z['adj_indices'], z['adj_indptr']), shape=z['adj_shape'])
A = ((A + A.T) > 0).astype(float).tolil()
A.setdiag(0)
A = A.tocsr()
A.eliminate_zeros()
y = z['labels'].astype(int)
n, C = len(y), y.max() + 1


def split(seed, train):
    r = np.random.RandomState(seed)
    tr, te = [], []
    for c in range(C):
        idx = np.where(y == c)[0]
        r.shuffle(idx)
        k, t = int(round(train * len(idx))), int(round(0.2 * len(idx)))
        tr += list(idx[:k])
        te += list(idx[k:k + t])
    return np.array(tr), np.array(te)


def lr(F, tr, Cr):
    return LogisticRegression(C=Cr, max_iter=3000).fit(F[tr], y[tr])


def acc(pred, te):
    return (pred[te] == y[te]).mean()


def cross_fit(F, tr, Cr, folds=5, seed=0):
    """Class probabilities: out-of-fold on training nodes, fold mean elsewhere."""
    perm = np.random.RandomState(seed).permutation(tr)
    parts = np.array_split(perm, folds)
    P = np.zeros((n, C))
    other = np.ones(n, bool)
    other[tr] = False
    for f in range(folds):
        rest = np.concatenate([parts[h] for h in range(folds) if h != f])
        q = lr(F, rest, Cr).predict_proba(F)
        P[parts[f]] = q[parts[f]]
        P[other] += q[other] / folds
    return P


def knn(F, k):
    Fn = normalize(F)
    S = (Fn @ Fn.T).toarray()
    np.fill_diagonal(S, -1)
    idx = np.argsort(-S, axis=1)[:, :k]
    K = sp.csr_matrix((np.ones(n * k), (np.repeat(np.arange(n), k), idx.ravel())), shape=(n, n))
    K = ((K + K.T) > 0).astype(float) + sp.eye(n)
    d = sp.diags(np.asarray(K.sum(1)).ravel() ** -0.5)
    return d @ K @ d


Xn = normalize(X)
if a.what == 'maxlr':
    grid = [1, 2, 5, 10, 20, 50, 100]
    for rep in range(3):
        res = np.array([[acc(lr(Xn, tr, Cr).predict(Xn), te) for Cr in grid]
                        for tr, te in (split(10 * rep + s + 1, a.train or 0.1) for s in range(a.runs))])
        print('repetition %d: mean %.3f, best C by mean %.3f, best over seeds and C %.3f'
              % (rep, res.mean(), res.mean(0).max(), res.max()))
elif a.what == 'stack':
    # edge-level σ for ε = 1 and 8 at δ = 1e-5, K = 1 (dpgnn account gaussian)
    for name, sigma in [('inf', 0.0), ('eps8', 0.6002), ('eps1', 3.7306)]:
        base, out = [], []
        for s in range(1, a.runs + 1):
            tr, te = split(s, a.train or 0.7)
            P = cross_fit(Xn, tr, 10)
            x0 = normalize(P)
            h = A @ x0 + np.random.RandomState(100 + s).normal(0, sigma, size=x0.shape)
            Z = np.hstack([x0, h])
            base.append(acc(P.argmax(1), te))
            out.append(acc(lr(Z, tr, 1.0).predict(Z), te))
        print('%s: base %.3f, stack %.3f' % (name, np.mean(base), np.mean(out)))
else:
    T = TfidfTransformer().fit_transform(X)
    for fname, F0 in [('binary', X), ('tfidf', T)]:
        res = []
        for s in range(1, a.runs + 1):
            tr, te = split(s, a.train or 0.1)
            S = knn(F0, 20)
            F = normalize(S @ (S @ normalize(F0)))
            res.append(acc(lr(F, tr, 10).predict(F), te))
        print('%s features, 20-NN graph, 2 hops: %.3f' % (fname, np.mean(res)))
