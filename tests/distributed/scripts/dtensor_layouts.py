"""The layouts DTensor's sharding propagation gives the ops that move dimensions (view, reshape,
flatten, squeeze, unsqueeze, expand, permute, indexing, cat, stack) and the layers' ops (softmax,
log_softmax, gelu, layer_norm, embedding, cross_entropy), each on a tensor sharded by rows and by
columns, evenly (8, 6) and not (7, 5); with each result's values and its input's gradient
against the same op on the whole tensor in one process.

Written for both libraries: `scripts/dtensor_layouts.py <out> minitorch` under minitorch's
launcher, `... <out> torch` under torchrun, so that tests/distributed/test_dtensor_layouts.py
compares minitorch's layouts with PyTorch's. Results to <out>/<module>-rank<r>.npz."""
import importlib
import sys

import numpy as np

out, module = sys.argv[1], sys.argv[2]
torch = importlib.import_module(module)
dist = importlib.import_module(module + ".distributed")
T = importlib.import_module(module + ".distributed.tensor")
F = torch.nn.functional
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
mesh = T.init_device_mesh("cpu", (n,))
S, R = T.Shard, T.Replicate
g = np.random.default_rng(0)
BASES = {"x": g.standard_normal((7, 5)), "z": g.standard_normal((8, 6))}


def cases(sh):
    """(name, fn(a, D)): D(array, placements) is a DTensor of it (the plain tensor in the one-process run)."""
    lead, last = sh
    rows = np.arange(lead) % last
    idx = np.array([[0, 3, 1], [4, 4, 2]])
    return [
        ("view(-1)", lambda a, D: a.view(-1)),
        ("reshape(-1)", lambda a, D: a.reshape(-1)),
        ("flatten()", lambda a, D: a.flatten()),
        ("unsqueeze(0)", lambda a, D: a.unsqueeze(0)),
        ("unsqueeze(-1)", lambda a, D: a.unsqueeze(-1)),
        ("unsqueeze(-1).squeeze(-1)", lambda a, D: a.unsqueeze(-1).squeeze(-1)),
        ("unsqueeze(0).squeeze()", lambda a, D: a.unsqueeze(0).squeeze()),
        ("view(2,-1)", lambda a, D: a.view(2, -1)),
        ("view(lead,2,-1)", lambda a, D: a.view(lead, 2, -1) if last % 2 == 0 else a.view(lead, last, 1)),
        ("reshape(4,2,-1)", lambda a, D: a.reshape(4, 2, -1) if lead == 8 else a.reshape(lead, last, 1)),
        ("view(2,4,6)", lambda a, D: a.view(2, 4, 6) if lead == 8 else a.view(1, lead, last)),
        ("unflatten(1)", lambda a, D: a.unflatten(1, (2, -1)) if last % 2 == 0 else a.unflatten(1, (last, 1))),
        ("permute(1,0)", lambda a, D: a.permute(1, 0)),
        ("movedim", lambda a, D: a.unsqueeze(0).movedim(0, 2)),
        ("expand", lambda a, D: a.unsqueeze(0).expand(3, -1, -1)),
        ("[1:5]", lambda a, D: a[1:5]),
        ("[:,1:3]", lambda a, D: a[:, 1:3]),
        ("[2]", lambda a, D: a[2]),
        ("[:,2]", lambda a, D: a[:, 2]),
        ("[None]", lambda a, D: a[None]),
        ("[...,None]", lambda a, D: a[..., None]),
        ("[:,::2]", lambda a, D: a[:, ::2]),
        ("cat0", lambda a, D: torch.cat([a, a * 2], 0)),
        ("cat1", lambda a, D: torch.cat([a, a * 2], 1)),
        ("stack0", lambda a, D: torch.stack([a, a * 2], 0)),
        ("stack1", lambda a, D: torch.stack([a, a * 2], 1)),
        ("stack2", lambda a, D: torch.stack([a, a * 2], 2)),
        ("softmax-1", lambda a, D: a.softmax(-1)),
        ("softmax0", lambda a, D: a.softmax(0)),
        ("log_softmax-1", lambda a, D: F.log_softmax(a, -1)),
        ("gelu", lambda a, D: F.gelu(a)),
        ("bias", lambda a, D: a + D(np.linspace(-1, 1, last), [R()])),
        ("scale_rows", lambda a, D: D(np.linspace(1, 2, lead)[:, None], [R()]) * a),
        ("mm", lambda a, D: a @ D(np.linspace(-1, 1, last * 3).reshape(last, 3), [R()])),
        ("silu", lambda a, D: F.silu(a)),
        ("layer_norm", lambda a, D: F.layer_norm(a, (last,), D(np.linspace(0.5, 2, last), [R()]),
                                                 D(np.linspace(-1, 1, last), [R()]))),
        ("layer_norm_nw", lambda a, D: F.layer_norm(a, (last,))),
        ("cross_entropy_R", lambda a, D: F.cross_entropy(a, D(rows, [R()]))),
        ("cross_entropy_S0", lambda a, D: F.cross_entropy(a, D(rows, [S(0)]))),
        ("cross_entropy_sum", lambda a, D: F.cross_entropy(a, D(rows, [S(0)]), reduction="sum")),
        ("cross_entropy_none", lambda a, D: F.cross_entropy(a, D(rows, [S(0)]), reduction="none")),
        ("embedding", lambda a, D: F.embedding(D(idx, [R()]), a)),
        ("embedding_idxS0", lambda a, D: F.embedding(D(idx, [S(0)]), a)),
    ]


def describe(y) -> str:
    ys = y if isinstance(y, (list, tuple)) else [y]
    return "; ".join(f"{tuple(v.shape)} {v.placements} {tuple(v.to_local().shape)}" for v in ys)


def error(e: Exception) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())}"


res = {}
for base, arr in BASES.items():
    weights = np.sin(np.arange(200.0))
    for placement in (S(0), S(1)):
        for name, fn in cases(arr.shape):
            key = f"{base}{placement.dim}.{name}"
            a = T.distribute_tensor(torch.from_numpy(arr.copy()), mesh, [placement])
            a.requires_grad_()

            made, plain = [], []  # the other operands (floating ones require grad), as DTensors and whole

            def D(v, placements):
                t = T.distribute_tensor(torch.from_numpy(np.ascontiguousarray(v)), mesh, placements)
                if t.is_floating_point():
                    made.append(t.requires_grad_())
                return t

            def whole_of(v, placements):
                t = torch.from_numpy(np.ascontiguousarray(v))
                if t.is_floating_point():
                    plain.append(t.requires_grad_())
                return t

            try:
                y = fn(a, D)
            except Exception as e:  # noqa: BLE001  (the tests compare class and words)
                res[key] = np.array(error(e))
                continue
            res[key] = np.array(describe(y))
            # values and the input's gradient against the same op on the whole tensor, one process
            whole = torch.from_numpy(arr.copy()).requires_grad_()
            want = fn(whole, whole_of)
            got = y.full_tensor()
            w = torch.from_numpy(weights[:got.numel()].reshape(tuple(got.shape)).copy())
            (got * w).sum().backward()
            (want * w).sum().backward()
            res[key + "|value"] = np.array(np.abs(got.detach().numpy() - want.detach().numpy()).max(initial=0.0))
            grads = [np.abs(a.grad.full_tensor().numpy() - whole.grad.numpy()).max()]
            grads += [np.abs(m.grad.full_tensor().numpy() - p.grad.numpy()).max() for m, p in zip(made, plain)]
            res[key + "|grad"] = np.array(max(grads))
np.savez(f"{out}/{module}-rank{r}.npz", **res)
dist.destroy_process_group()
