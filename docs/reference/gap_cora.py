# An independent PyTorch re-implementation of GAP's edge-level pipeline
# (encoder -> K noisy hops -> classifier over all hops; BatchNorm, SELU,
# Adam, best-validation restore, as in GAP's code) on cora with a stratified
# 10% / 20% split, written to check dpgnn's GAP numbers against a second
# implementation. --mode caribou replaces the hops by CARIBOU's perturbed
# contractive message passing (K times X <- Proj_unit-ball(C_L (a1 Ahat X +
# (1 - a1) Mean X) + beta X0 + N(0, sigma^2)), Ahat the GCN-normalised
# adjacency) and classifies [X0, XK]. Not run by CI; needs numpy and torch
# (Debian: apt-get install python3-torch python3-numpy).
#
#   python3 gap_cora.py [--data PATH] [--sigma S] [--hops K] [--cf FOLDS] [--dropout P] [--mode gap|mlp|caribou]
#
# --data is the cora.npz file (the npz layout dpgnn's loader reads). It
# defaults to $DPGNN_DATA/cora.npz when DPGNN_DATA is set, else to
# ../shared/datasets/cora.npz relative to the repository root (found from
# this script's location, so the default works from any directory).
# --sigma is the per-coordinate noise std of each hop (edge level, unit
# sensitivity): 5.28 for K = 2 at eps = 1, delta = 1e-5; 0.849 for K = 2 at
# eps = 8. --cf k uses k-fold cross-fitted class probabilities as X0
# (dpgnn's --encoder-folds). The split differs from dpgnn's (numpy RNG), so
# compare means, not single runs.
import os, sys, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
import argparse
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.environ.get('DPGNN_DATA'):
    DEFAULT_DATA = os.path.join(os.environ['DPGNN_DATA'], 'cora.npz')
else:
    DEFAULT_DATA = os.path.join(REPO, '..', 'shared', 'datasets', 'cora.npz')
p = argparse.ArgumentParser()
p.add_argument('--data', default=DEFAULT_DATA,
               help='path to cora.npz (default: $DPGNN_DATA/cora.npz, else '
                    '../shared/datasets/cora.npz relative to the repository root)')
p.add_argument('--sigma', type=float, default=0.0)
p.add_argument('--hops', type=int, default=2)
p.add_argument('--hidden', type=int, default=16)
p.add_argument('--lr', type=float, default=0.01)
p.add_argument('--epochs', type=int, default=100)
p.add_argument('--dropout', type=float, default=0.0)
p.add_argument('--bn', type=int, default=1)
p.add_argument('--runs', type=int, default=3)
p.add_argument('--mode', default='gap')  # gap, mlp or caribou
p.add_argument('--lipschitz', type=float, default=0.9)  # caribou: C_L
p.add_argument('--alpha1', type=float, default=1.0)  # caribou: a1
p.add_argument('--beta', type=float, default=1.0)  # caribou: beta
p.add_argument('--share', type=int, default=0)
p.add_argument('--cf', type=int, default=0)
a = p.parse_args()
z = np.load(a.data, allow_pickle=False)
indptr, indices, data = z['adj_indptr'], z['adj_indices'], z['adj_data']
n = int(z['adj_shape'][0])
rows = np.repeat(np.arange(n), np.diff(indptr))
A = torch.zeros(n, n)
A[rows, indices] = 1; A[indices, rows] = 1; A.fill_diagonal_(0)
ai, ax, ap = z['attr_indices'], z['attr_data'], z['attr_indptr']
X = torch.zeros(n, int(z['attr_shape'][1]))
X[np.repeat(np.arange(n), np.diff(ap)), ai] = torch.tensor(ax, dtype=torch.float32)
y = torch.tensor(z['labels'].astype(np.int64))
C = int(y.max()) + 1
As = A.to_sparse()
_d = (A.sum(1) + 1).rsqrt()
Ahat = (_d[:, None] * (A + torch.eye(n)) * _d[None, :]).to_sparse()  # GCN normalisation
def split(seed):
    g = np.random.default_rng(seed)
    tr, te, va = [], [], []
    for c in range(C):
        idx = np.where(y.numpy() == c)[0]; g.shuffle(idx)
        k1 = int(round(0.1 * len(idx))); k2 = int(round(0.2 * len(idx)))
        tr += list(idx[:k1]); te += list(idx[k1:k1 + k2]); va += list(idx[k1 + k2:])
    return torch.tensor(tr), torch.tensor(va), torch.tensor(te)
class MLP(nn.Module):
    def __init__(s, i, h, o, L, bn, do):
        super().__init__(); dims = [i] + [h] * (L - 1) + [o]
        s.lin = nn.ModuleList([nn.Linear(dims[k], dims[k + 1]) for k in range(L)])
        s.bns = nn.ModuleList([nn.BatchNorm1d(h) for _ in range(L - 1)]) if bn else None
        s.do = do
    def forward(s, x):
        for k, l in enumerate(s.lin):
            x = l(x)
            if k < len(s.lin) - 1:
                if s.bns is not None: x = s.bns[k](x)
                x = F.dropout(x, s.do, s.training); x = F.selu(x)
        return x
class Enc(nn.Module):
    def __init__(s):
        super().__init__(); s.m = MLP(X.shape[1], a.hidden, a.hidden, 2, a.bn, a.dropout)
        s.bn = nn.BatchNorm1d(a.hidden) if a.bn else nn.Identity(); s.head = nn.Linear(a.hidden, C)
    def emb(s, x): return F.normalize(s.m(x), dim=-1)
    def forward(s, x): return s.head(F.selu(F.dropout(s.bn(s.emb(x)), a.dropout, s.training)))
class Cls(nn.Module):
    def __init__(s, k, din):
        super().__init__()
        base = [MLP(din, a.hidden, a.hidden, 1, a.bn, a.dropout)]
        s.bases = nn.ModuleList(base * k if a.share else [MLP(din, a.hidden, a.hidden, 1, a.bn, a.dropout) for _ in range(k)])
        s.bn = nn.BatchNorm1d(a.hidden * k) if a.bn else nn.Identity(); s.head = nn.Linear(a.hidden * k, C)
    def forward(s, xs):
        h = torch.cat([b(x) for b, x in zip(s.bases, xs)], -1)
        return s.head(F.selu(F.dropout(s.bn(F.normalize(h, dim=-1)), a.dropout, s.training)))
def fit(model, inputs, tr, va, te):
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    best, state = -1, None
    for ep in range(a.epochs):
        model.train(); opt.zero_grad()
        out = model(*[x[tr] if not isinstance(x, list) else [t[tr] for t in x] for x in inputs])
        F.cross_entropy(out, y[tr]).backward(); opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(*inputs).argmax(-1)
        v = (pred[va] == y[va]).float().mean().item()
        if v > best:
            best = v; state = {k: t.clone() for k, t in model.state_dict().items()}
            tacc = (pred[te] == y[te]).float().mean().item()
    model.load_state_dict(state)
    return best, tacc
res = []
for r in range(a.runs):
    torch.manual_seed(r)
    tr, va, te = split(r)
    if a.mode == 'mlp':
        m = MLP(X.shape[1], a.hidden, C, 2, a.bn, a.dropout)
        res.append(fit(m, [X], tr, va, te)); continue
    if a.cf == 0:
        enc = Enc(); fit(enc, [X], tr, va, te)
        enc.eval()
        with torch.no_grad():
            x = enc.emb(X)
    else:
        # k-fold cross-fitted class probabilities
        perm = tr[torch.randperm(len(tr))]
        folds = perm.chunk(a.cf)
        P = torch.zeros(n, C); cnt = torch.zeros(n, 1)
        for f in range(a.cf):
            trf = torch.cat([folds[j] for j in range(a.cf) if j != f])
            enc = Enc(); fit(enc, [X], trf, va, te); enc.eval()
            with torch.no_grad():
                pr = F.softmax(enc(X), -1)
            mask = torch.ones(n, 1); mask[trf] = 0
            P += pr * mask; cnt += mask
        x = P / cnt
    x = x.detach()
    xs = [x]
    if a.mode == 'caribou':
        xk = x
        for _ in range(a.hops):
            h = a.lipschitz * (a.alpha1 * torch.sparse.mm(Ahat, xk) + (1 - a.alpha1) * xk.mean(0, keepdim=True)) + a.beta * x
            h = h + a.sigma * torch.randn_like(h)
            xk = h / h.norm(dim=-1, keepdim=True).clamp(min=1)
        cl = Cls(2, x.shape[1])
        res.append(fit(cl, [[x, xk]], tr, va, te))
        continue
    for _ in range(a.hops):
        x = torch.sparse.mm(As, F.normalize(x, dim=-1))
        x = x + a.sigma * torch.randn_like(x)
        x = F.normalize(x, dim=-1); xs.append(x)
    cl = Cls(a.hops + 1, x.shape[1])
    res.append(fit(cl, [xs], tr, va, te))
res = np.array(res)
print(vars(a), 'val %.4f test %.4f' % tuple(res.mean(0)), res[:, 1])
