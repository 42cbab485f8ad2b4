"""Every collective on every rank; rank r's inputs are inputs(r) of test_collectives.py, its
results go to <out>/rank<r>.npz. Arguments: <out> [backend (mpi)] [device (cpu)]: backend "nccl"
with device "cuda" runs them on NCCL (the emulated device's in CI)."""
import os
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from inputs import inputs  # noqa: E402

backend = sys.argv[2] if len(sys.argv) > 2 else "mpi"
dev = sys.argv[3] if len(sys.argv) > 3 else "cpu"
if dev == "cuda":  # a device per rank where there are several, as with torchrun
    dev = f"cuda:{int(os.environ['LOCAL_RANK']) % minitorch.cuda.device_count()}"
    minitorch.cuda.set_device(dev)
dist.init_process_group(backend)
r, n = dist.get_rank(), dist.get_world_size()
res = {"rank": np.array(r), "world": np.array(n), "backend": np.array(dist.get_backend())}
x = inputs(r, n)


def T(a):
    return minitorch.from_numpy(a).to(dev)


def empty(*shape, **kw):
    return minitorch.empty(*shape, device=dev, **kw)

for name, op in [("sum", dist.ReduceOp.SUM), ("avg", dist.ReduceOp.AVG), ("max", dist.ReduceOp.MAX),
                 ("min", dist.ReduceOp.MIN), ("prod", dist.ReduceOp.PRODUCT)]:
    for dt in ("float32", "float64", "int64", "int32"):
        t = T(x[dt].copy())
        dist.all_reduce(t, op=op)
        res[f"all_reduce_{name}_{dt}"] = t.cpu().numpy().copy()
t = T(x["float16"].copy())
dist.all_reduce(t)
res["all_reduce_sum_float16"] = t.cpu().numpy().copy()
t = T(x["bool"].copy())
dist.all_reduce(t, op=dist.ReduceOp.MAX)
res["all_reduce_max_bool"] = t.cpu().numpy().copy()
t = T(x["nan"].copy())
dist.all_reduce(t)
res["all_reduce_sum_nan"] = t.cpu().numpy().copy()
# a non-contiguous tensor (a transposed view of a bigger one): reduced in place through a copy
base = T(x["float64_2d"].copy())
view = base.t()
dist.all_reduce(view)
res["all_reduce_transposed"] = base.cpu().numpy().copy()
e = empty(0, 3)
dist.all_reduce(e)
res["all_reduce_empty"] = e.cpu().numpy().copy()
w = dist.all_reduce(T(x["float32"].copy()), async_op=True)
t = T(x["float32"].copy())
w2 = dist.all_reduce(t, async_op=True)
assert w.wait() is True and w2.wait() is True and w2.is_completed()
res["all_reduce_async"] = t.cpu().numpy().copy()

src = n - 1
t = T(x["float32"].copy())
dist.broadcast(t, src=src)
res["broadcast"] = t.cpu().numpy().copy()

lst = [empty(3, 4) for _ in range(n)]
dist.all_gather(lst, T(x["float32"].copy()))
res["all_gather"] = np.stack([v.cpu().numpy() for v in lst])
out = empty(n * 3, 4)
dist.all_gather_into_tensor(out, T(x["float32"].copy()))
res["all_gather_into_tensor"] = out.cpu().numpy().copy()

o = empty(2, 4, dtype=minitorch.float64)
dist.reduce_scatter_tensor(o, T(x["rs"].copy()))
res["reduce_scatter_sum"] = o.cpu().numpy().copy()
o = empty(2, 4, dtype=minitorch.float64)
dist.reduce_scatter_tensor(o, T(x["rs"].copy()), op=dist.ReduceOp.AVG)
res["reduce_scatter_avg"] = o.cpu().numpy().copy()

dst = 1 % n
gl = [empty(3, 4) for _ in range(n)] if r == dst else None
dist.gather(T(x["float32"].copy()), gl, dst=dst)
if r == dst:
    res["gather"] = np.stack([v.cpu().numpy() for v in gl])
recv = empty(3, 4)
dist.scatter(recv, [T(inputs(k, n)["float32"]) * 10 for k in range(n)] if r == src else None, src=src)
res["scatter"] = recv.cpu().numpy().copy()

# a ring of send/recv, then isend/irecv the other way
buf = empty(3, 4)
if r % 2 == 0:
    dist.send(T(x["float32"].copy()), dst=(r + 1) % n)
    got = dist.recv(buf, src=(r - 1) % n)
else:
    got = dist.recv(buf, src=None if dev == "cpu" else (r - 1) % n)  # NCCL receives from a named rank
    dist.send(T(x["float32"].copy()), dst=(r + 1) % n)
res["recv"] = buf.cpu().numpy().copy()
res["recv_from"] = np.array(got)
buf2 = empty(3, 4)
ws = [dist.isend(T(x["float32"].copy()), dst=(r - 1) % n), dist.irecv(buf2, src=(r + 1) % n)]
for w in ws:
    w.wait()
res["irecv"] = buf2.cpu().numpy().copy()

t = T(x["float64"].copy())
dist.reduce(t, dst=n - 1)
res["reduce_sum"] = t.cpu().numpy().copy()
t = T(x["int64"].copy())
dist.reduce(t, dst=0, op=dist.ReduceOp.MAX, async_op=True).wait()
res["reduce_max"] = t.cpu().numpy().copy()
objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "data": list(range(r))})
res["all_gather_object"] = np.array([o["rank"] * 100 + len(o["data"]) for o in objs])
lst = [f"from {r}", {"k": (r,)}] if r == src else [None, None]
dist.broadcast_object_list(lst, src=src)
res["broadcast_object_list"] = np.array([lst[0], str(lst[1])])

# all_to_all_single: equal parts, then uneven split sizes (rank r sends q + r + 1 rows of 2 to rank q)
a2a_in = T(np.arange(n * 3 * 2, dtype=np.float32).reshape(n * 3, 2) + 100 * r)
a2a_out = empty(n * 3, 2)
dist.all_to_all_single(a2a_out, a2a_in)
res["all_to_all_single"] = a2a_out.cpu().numpy().copy()
ins = [q + r + 1 for q in range(n)]
outs = [r + q + 1 for q in range(n)]
a2a_in = T(np.arange(sum(ins) * 2, dtype=np.float64).reshape(-1, 2) + 1000 * r)
a2a_out = empty(sum(outs), 2, dtype=minitorch.float64)
dist.all_to_all_single(a2a_out, a2a_in, output_split_sizes=outs, input_split_sizes=ins, async_op=True).wait()
res["all_to_all_single_uneven"] = a2a_out.cpu().numpy().copy()
outl = [empty(q + 1, dtype=minitorch.int64) for q in range(n)]
dist.all_to_all(outl, [T(np.full(r + 1, 10 * r + q, dtype=np.int64)) for q in range(n)])
res["all_to_all"] = np.concatenate([t.cpu().numpy() for t in outl])
t = T(x["float32"].copy())
with __import__("warnings").catch_warnings(record=True) as caught:
    __import__("warnings").simplefilter("always")
    dist.all_reduce(t, op=dist.reduce_op.MAX)
res["reduce_op_alias"] = t.cpu().numpy().copy()
res["reduce_op_warned"] = np.array(any("reduce_op` is deprecated" in str(c.message) for c in caught))

g = dist.new_group([0, n - 1])
t = T(x["float64"].copy())
ret = dist.all_reduce(t, group=g)
res["group_all_reduce"] = t.cpu().numpy().copy()
res["group_rank"] = np.array(dist.get_rank(g))
res["group_size"] = np.array(dist.get_world_size(g))
dist.barrier()
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
assert not dist.is_initialized()
np.savez(sys.argv[1] + f"/rank{r}.npz", **res)
