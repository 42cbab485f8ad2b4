"""Every collective on every rank; rank r's inputs are inputs(r) of test_collectives.py, its
results go to <out>/rank<r>.npz."""
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from inputs import inputs  # noqa: E402

dist.init_process_group("gloo" if len(sys.argv) > 2 and sys.argv[2] == "gloo" else "mpi")
r, n = dist.get_rank(), dist.get_world_size()
res = {"rank": np.array(r), "world": np.array(n)}
x = inputs(r, n)
T = minitorch.from_numpy

for name, op in [("sum", dist.ReduceOp.SUM), ("avg", dist.ReduceOp.AVG), ("max", dist.ReduceOp.MAX),
                 ("min", dist.ReduceOp.MIN), ("prod", dist.ReduceOp.PRODUCT)]:
    for dt in ("float32", "float64", "int64", "int32"):
        t = T(x[dt].copy())
        dist.all_reduce(t, op=op)
        res[f"all_reduce_{name}_{dt}"] = t.numpy().copy()
t = T(x["float16"].copy())
dist.all_reduce(t)
res["all_reduce_sum_float16"] = t.numpy().copy()
t = T(x["bool"].copy())
dist.all_reduce(t, op=dist.ReduceOp.MAX)
res["all_reduce_max_bool"] = t.numpy().copy()
t = T(x["nan"].copy())
dist.all_reduce(t)
res["all_reduce_sum_nan"] = t.numpy().copy()
# a non-contiguous tensor (a transposed view of a bigger one): reduced in place through a copy
base = T(x["float64_2d"].copy())
view = base.t()
dist.all_reduce(view)
res["all_reduce_transposed"] = base.numpy().copy()
e = minitorch.empty(0, 3)
dist.all_reduce(e)
res["all_reduce_empty"] = e.numpy().copy()
w = dist.all_reduce(T(x["float32"].copy()), async_op=True)
t = T(x["float32"].copy())
w2 = dist.all_reduce(t, async_op=True)
assert w.wait() is True and w2.wait() is True and w2.is_completed()
res["all_reduce_async"] = t.numpy().copy()

src = n - 1
t = T(x["float32"].copy())
dist.broadcast(t, src=src)
res["broadcast"] = t.numpy().copy()

lst = [minitorch.empty(3, 4) for _ in range(n)]
dist.all_gather(lst, T(x["float32"].copy()))
res["all_gather"] = np.stack([v.numpy() for v in lst])
out = minitorch.empty(n * 3, 4)
dist.all_gather_into_tensor(out, T(x["float32"].copy()))
res["all_gather_into_tensor"] = out.numpy().copy()

o = minitorch.empty(2, 4, dtype=minitorch.float64)
dist.reduce_scatter_tensor(o, T(x["rs"].copy()))
res["reduce_scatter_sum"] = o.numpy().copy()
o = minitorch.empty(2, 4, dtype=minitorch.float64)
dist.reduce_scatter_tensor(o, T(x["rs"].copy()), op=dist.ReduceOp.AVG)
res["reduce_scatter_avg"] = o.numpy().copy()

dst = 1 % n
gl = [minitorch.empty(3, 4) for _ in range(n)] if r == dst else None
dist.gather(T(x["float32"].copy()), gl, dst=dst)
if r == dst:
    res["gather"] = np.stack([v.numpy() for v in gl])
recv = minitorch.empty(3, 4)
dist.scatter(recv, [T(inputs(k, n)["float32"]) * 10 for k in range(n)] if r == src else None, src=src)
res["scatter"] = recv.numpy().copy()

# a ring of send/recv, then isend/irecv the other way
buf = minitorch.empty(3, 4)
if r % 2 == 0:
    dist.send(T(x["float32"].copy()), dst=(r + 1) % n)
    got = dist.recv(buf, src=(r - 1) % n)
else:
    got = dist.recv(buf)
    dist.send(T(x["float32"].copy()), dst=(r + 1) % n)
res["recv"] = buf.numpy().copy()
res["recv_from"] = np.array(got)
buf2 = minitorch.empty(3, 4)
ws = [dist.isend(T(x["float32"].copy()), dst=(r - 1) % n), dist.irecv(buf2, src=(r + 1) % n)]
for w in ws:
    w.wait()
res["irecv"] = buf2.numpy().copy()

t = T(x["float64"].copy())
dist.reduce(t, dst=n - 1)
res["reduce_sum"] = t.numpy().copy()
t = T(x["int64"].copy())
dist.reduce(t, dst=0, op=dist.ReduceOp.MAX, async_op=True).wait()
res["reduce_max"] = t.numpy().copy()
objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "data": list(range(r))})
res["all_gather_object"] = np.array([o["rank"] * 100 + len(o["data"]) for o in objs])
lst = [f"from {r}", {"k": (r,)}] if r == src else [None, None]
dist.broadcast_object_list(lst, src=src)
res["broadcast_object_list"] = np.array([lst[0], str(lst[1])])

g = dist.new_group([0, n - 1])
t = T(x["float64"].copy())
ret = dist.all_reduce(t, group=g)
res["group_all_reduce"] = t.numpy().copy()
res["group_rank"] = np.array(dist.get_rank(g))
res["group_size"] = np.array(dist.get_world_size(g))
dist.barrier()
dist.barrier(async_op=True).wait()
dist.destroy_process_group()
assert not dist.is_initialized()
np.savez(sys.argv[1] + f"/rank{r}.npz", **res)
