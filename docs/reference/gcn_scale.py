# An independent PyTorch GCN (Kipf & Welling, as `dpgnn train gcn` trains
# it: hidden 64, dropout 0.5 on the input and the hidden layer, Adam at
# lr 0.01 with weight decay 5e-4, full batch, the validation accuracy
# evaluated every epoch) timed per epoch on a graph file, to set the growth
# of dpgnn's epoch from 10^5 to 10^6 nodes (docs/performance.md, "Scale")
# against PyTorch's on the same machine. Not run by CI; needs numpy and
# torch (Debian: apt-get install python3-torch python3-numpy).
#
#   python3 gcn_scale.py GRAPH.npz [--epochs E] [--dtype float32|float64]
#
# GRAPH.npz is a file of `dpgnn data generate` (dense attr_matrix, CSR
# adjacency, labels). The split is 10 % training, 70 % validation, 20 %
# test nodes (dpgnn's ratio:0.1:0.2), drawn with numpy; all cores are
# used (torch.set_num_threads). It prints the
# median time of an epoch (one training step and one evaluation of the
# validation rows) over epochs 2..E, in seconds.
import argparse, os, time, warnings
import numpy as np, torch, torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument('graph')
p.add_argument('--epochs', type=int, default=21)
p.add_argument('--dtype', default='float32', choices=['float32', 'float64'])
p.add_argument('--hidden', type=int, default=64)
a = p.parse_args()
dt = getattr(torch, a.dtype)
torch.manual_seed(1)
# Debian's torch starts with one thread; use every core, as dpgnn does.
torch.set_num_threads(os.cpu_count())
warnings.filterwarnings('ignore', message='Sparse CSR tensor support is in beta')

z = np.load(a.graph, allow_pickle=False)
n = int(z['adj_shape'][0])
indptr, indices = z['adj_indptr'].astype(np.int64), z['adj_indices'].astype(np.int64)
# GCN normalisation of A + I: D^-1/2 (A + I) D^-1/2, a symmetric pattern.
rows = np.repeat(np.arange(n), np.diff(indptr))
keep = rows != indices
rows, cols = np.concatenate([rows[keep], np.arange(n)]), np.concatenate([indices[keep], np.arange(n)])
deg = np.bincount(rows, minlength=n).astype(np.float64)
vals = 1 / np.sqrt(deg[rows] * deg[cols])
order = np.lexsort((cols, rows))
rows, cols, vals = rows[order], cols[order], vals[order]
crow = np.zeros(n + 1, dtype=np.int64)
np.add.at(crow, rows + 1, 1)
crow = np.cumsum(crow)
A = torch.sparse_csr_tensor(torch.from_numpy(crow), torch.from_numpy(cols),
                            torch.from_numpy(vals).to(dt), size=(n, n))
X = torch.from_numpy(z['attr_matrix']).to(dt)
y = torch.from_numpy(z['labels'].astype(np.int64))
C = int(y.max()) + 1
perm = np.random.default_rng(1).permutation(n)
tr, va = torch.from_numpy(perm[:n // 10]), torch.from_numpy(perm[n // 10:n - n // 5])

def glorot(i, o):
    w = torch.empty(i, o, dtype=dt)
    torch.nn.init.xavier_uniform_(w)
    return w.requires_grad_()

W1, b1 = glorot(X.shape[1], a.hidden), torch.zeros(a.hidden, dtype=dt, requires_grad=True)
W2, b2 = glorot(a.hidden, C), torch.zeros(C, dtype=dt, requires_grad=True)
opt = torch.optim.Adam([W1, b1, W2, b2], lr=0.01, weight_decay=5e-4)

def forward(train):
    x = F.dropout(X, 0.5, train)
    h = F.relu(torch.sparse.mm(A, x) @ W1 + b1)  # (A·X)·W: X is narrower than the layer
    h = F.dropout(h, 0.5, train)
    return torch.sparse.mm(A, h @ W2) + b2

times = []
for e in range(a.epochs):
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = F.nll_loss(F.log_softmax(forward(True)[tr], 1), y[tr])
    loss.backward()
    opt.step()
    with torch.no_grad():
        acc = (forward(False)[va].argmax(1) == y[va]).to(dt).mean().item()
    times.append(time.perf_counter() - t0)
print(f"{a.graph} {a.dtype} threads {torch.get_num_threads()}: median epoch "
      f"{np.median(times[1:]):.4f} s over {len(times) - 1}, last loss {loss.item():.4f}, val acc {acc:.3f}")
