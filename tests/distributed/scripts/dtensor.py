"""DTensor over the launched ranks: made from a global tensor or from local ones, laid out again,
computed with (pointwise, sum, mean, amax, matmul, transpose, the optimizers' steps), differentiated;
its full values, placements, shapes and the errors go to <out>/rank<r>.npz for
tests/distributed/test_dtensor.py to compare with NumPy."""
import datetime
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn
from minitorch.distributed.tensor import (DTensor, Partial, Replicate, Shard, distribute_tensor, init_device_mesh,
                                          zeros)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fsdp_models import error  # noqa: E402

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
out = sys.argv[1]
res = {}
mesh = init_device_mesh("cpu", (n,))
g = np.random.default_rng(0)
X = g.standard_normal((7, 5))  # 7 rows: uneven over 2 and 4 ranks (4, 3 and 2, 2, 2, 1)
Y = g.standard_normal((7, 5))
W = g.standard_normal((5, 6))
x = minitorch.from_numpy(X.copy())


def full(dt) -> np.ndarray:
    return dt.full_tensor().detach().numpy()


def layout(dt) -> str:
    return f"{type(dt).__name__} {tuple(dt.shape)} {dt.stride()} {dt.placements} {tuple(dt.to_local().shape)}"


# distribute_tensor: each placement, the whole back from the parts
for name, placements in (("s0", [Shard(0)]), ("s1", [Shard(1)]), ("rep", [Replicate()]), ("neg", [Shard(-1)])):
    dt = distribute_tensor(x, mesh, placements)
    res[f"layout_{name}"] = np.array(layout(dt))
    res[f"local_{name}"] = dt.to_local().numpy()
    res[f"full_{name}"] = full(dt)

# redistribute between every pair of placements (and from Partial)
s0 = distribute_tensor(x, mesh, [Shard(0)])
for name, placements in (("s0_s1", [Shard(1)]), ("s0_rep", [Replicate()])):
    moved = s0.redistribute(mesh, placements)
    res[f"re_{name}"] = np.array(layout(moved))
    res[f"re_{name}_full"] = full(moved)
rep = distribute_tensor(x, mesh, [Replicate()])
res["re_rep_s1_local"] = rep.redistribute(mesh, [Shard(1)]).to_local().numpy()
part = DTensor.from_local(minitorch.from_numpy(X * (r + 1)), mesh, [Partial()])
res["partial"] = np.array(layout(part))
res["partial_full"] = full(part)
res["partial_s0_local"] = part.redistribute(mesh, [Shard(0)]).to_local().numpy()
res["rep_to_partial_full"] = full(rep.redistribute(mesh, [Partial()]))

# from_local: global shape from the local one (or given), and its gradient comes back local
local = minitorch.from_numpy(X[:2] * (r + 1)).requires_grad_()
fl = DTensor.from_local(local, mesh, [Shard(0)])
res["from_local"] = np.array(layout(fl))
res["from_local_full"] = full(fl)
res["from_local_shape"] = np.array(layout(DTensor.from_local(minitorch.zeros(1, 5), mesh, [Shard(0)],
                                                             shape=(n - 1, 5), stride=(5, 1))))
(fl * 3).sum().full_tensor().backward()
res["from_local_grad"] = local.grad.numpy()

# pointwise: the layouts kept; a replicated operand redistributed to the first's; scalars
a = distribute_tensor(x, mesh, [Shard(0)])
b = distribute_tensor(minitorch.from_numpy(Y.copy()), mesh, [Replicate()])
c = (a * 2 + b).exp() - minitorch.tanh(a) / 3
res["pointwise"] = np.array(layout(c))
res["pointwise_full"] = full(c)
d = a.clone()
d.mul_(b).add_(1.5)
res["inplace"] = np.array(layout(d))
res["inplace_full"] = full(d)
p2 = part * 2 + part  # linear: stays partial
res["partial_linear"] = np.array(layout(p2))
res["partial_linear_full"] = full(p2)
res["partial_relu_full"] = full(minitorch.relu(part - 1.0))  # nonlinear: reduced first
res["partial_relu"] = np.array(layout(minitorch.relu(part)))

# reductions: a reduced sharded dimension makes the result partial
res["sum_all"] = np.array(layout(a.sum()))
res["sum_all_full"] = full(a.sum())
res["sum_0"] = np.array(layout(a.sum(0)))
res["sum_0_full"] = full(a.sum(0))
res["sum_1"] = np.array(layout(a.sum(dim=1, keepdim=True)))
res["sum_1_full"] = full(a.sum(dim=1, keepdim=True))
res["mean_0_full"] = full(a.mean(0))
res["amax_full"] = full(a.amax(0))
res["amax"] = np.array(layout(a.amax(0)))
res["item"] = np.array(a.sum().item())
res["numpy"] = a.numpy()

# matmul: the matrix rules
w = distribute_tensor(minitorch.from_numpy(W.copy()), mesh, [Replicate()])
res["mm_s0"] = np.array(layout(a @ w))
res["mm_s0_full"] = full(a @ w)
w_s0 = distribute_tensor(minitorch.from_numpy(W.copy()), mesh, [Shard(0)])
a_s1 = distribute_tensor(x, mesh, [Shard(1)])
res["mm_partial"] = np.array(layout(minitorch.mm(a_s1, w_s0)))
res["mm_partial_full"] = full(minitorch.mm(a_s1, w_s0))
res["mm_s1"] = np.array(layout(b @ distribute_tensor(minitorch.from_numpy(W.copy()), mesh, [Shard(1)])))
res["t"] = np.array(layout(a.t()))
res["t_full"] = full(a.t())

# autograd: a DTensor leaf's gradient is a DTensor laid out as it
wp = distribute_tensor(minitorch.from_numpy(W.copy()), mesh, [Shard(1)])
wp.requires_grad_()
loss = (b @ wp).tanh().sum().full_tensor()
loss.backward()
res["grad_layout"] = np.array(layout(wp.grad))
res["grad_full"] = full(wp.grad)
res["loss"] = loss.detach().numpy()

# an optimizer steps the shards: SGD with momentum and Adam, two steps each
for opt_name in ("sgd", "adam"):
    param = nn.Parameter(distribute_tensor(minitorch.from_numpy(W.copy()), mesh, [Shard(0)]))
    opt = (minitorch.optim.SGD([param], lr=0.1, momentum=0.9) if opt_name == "sgd"
           else minitorch.optim.Adam([param], lr=0.01))
    target = distribute_tensor(minitorch.from_numpy(W.copy() * 0.5), mesh, [Shard(0)])
    for _ in range(2):
        opt.zero_grad()
        ((param - target) ** 2).sum().full_tensor().backward()
        opt.step()
    res[f"opt_{opt_name}"] = full(param.detach())
    res[f"opt_{opt_name}_is_param"] = np.array([isinstance(param, nn.Parameter), isinstance(param.grad, DTensor)])

# clip_grad_norm_ over DTensor gradients: the norm of the whole, every shard scaled by it; a
# replicated 0-dim factor broadcasts over a shard in place
p1 = nn.Parameter(distribute_tensor(minitorch.from_numpy(W.copy()), mesh, [Shard(0)]))
p2 = nn.Parameter(distribute_tensor(x, mesh, [Shard(1)]))
(p1.sum() * 3 + (p2 * p2).sum()).full_tensor().backward()
res["clip_norm"] = np.array(float(nn.utils.clip_grad_norm_([p1, p2], 0.5)))
res["clip_grads"] = np.concatenate([full(p1.grad).reshape(-1), full(p2.grad).reshape(-1)])
res["clip_inf"] = np.array(float(nn.utils.clip_grad_norm_([p1, p2], 0.5, norm_type="inf")))
half = distribute_tensor(minitorch.tensor(0.5, dtype=minitorch.float64), mesh, [Replicate()])
scaled = a.clone()
scaled.mul_(half)
res["scaled"] = np.array(layout(scaled))
res["scaled_full"] = full(scaled)
res["rows_scaled"] = np.array(layout(half * a))
cols = distribute_tensor(x, mesh, [Shard(1)])
bias = distribute_tensor(minitorch.from_numpy(Y[0].copy()), mesh, [Replicate()])
res["bias_cols"] = np.array(layout(cols + bias))  # the bias chunked like the columns: no gather
res["bias_cols_full"] = full(cols + bias)
res["bias_rows_full"] = full(bias + a)

# distribute_module: a Linear whose weight is sharded by partition_fn (Shard(0): rows of the
# output), the bias replicated; the input replicated by input_fn, the output gathered by output_fn
def rows_of_weight(name, module, device_mesh):
    if isinstance(module, nn.Linear):
        module.register_parameter("weight", nn.Parameter(distribute_tensor(module.weight.data, device_mesh,
                                                                           [Shard(0)])))


minitorch.manual_seed(0)
lin = nn.Linear(5, 6).double()
lin(x).tanh().sum().backward()
res["module_want_grads"] = np.concatenate([lin.weight.grad.numpy().reshape(-1), lin.bias.grad.numpy()])
want = lin(x).detach().numpy()
nn_dt = minitorch.distributed.tensor.distribute_module(
    lin, mesh, rows_of_weight, input_fn=lambda mod, inputs, m: tuple(
        DTensor.from_local(i, m, [Replicate()]) for i in inputs),
    output_fn=lambda mod, outputs, m: outputs.full_tensor())
res["module_kinds"] = np.array([f"{name} {p.placements}" for name, p in nn_dt.named_parameters()])
res["module_out"] = nn_dt(x).detach().numpy()
nn_dt(x).tanh().sum().backward()  # through the sharded weight: its gradient sharded as it
res["module_grads"] = np.concatenate([full(nn_dt.weight.grad).reshape(-1), full(nn_dt.bias.grad)])
res["module_want"] = want

# a 2-D mesh: two mesh dimensions sharding two tensor dimensions, and one dimension twice
if n == 4:
    mesh2 = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    dt2 = distribute_tensor(x, mesh2, [Shard(0), Shard(1)])
    res["mesh2"] = np.array(layout(dt2))
    res["mesh2_full"] = full(dt2)
    twice = distribute_tensor(x, mesh2, [Shard(0), Shard(0)])
    res["mesh2_twice_local"] = twice.to_local().numpy()
    res["mesh2_twice_full"] = full(twice)
    res["mesh2_re_full"] = full(dt2.redistribute(mesh2, [Replicate(), Shard(0)]))
    res["mesh2_sum_full"] = full(dt2.sum(1))

# distributed.checkpoint of DTensors: saved sharded by rows (each rank its rows), replicated (once)
# and partial (reduced first); loaded into other layouts (columns, replicated) and a plain tensor
import minitorch.distributed.checkpoint as dcp  # noqa: E402

ckpt = sys.argv[2]
dcp.save({"rows": distribute_tensor(x, mesh, [Shard(0)]), "rep": rep, "part": part}, checkpoint_id=ckpt)
into = {"rows": distribute_tensor(minitorch.zeros(7, 5, dtype=minitorch.float64), mesh, [Shard(1)]),
        "rep": minitorch.zeros(7, 5, dtype=minitorch.float64),
        "part": distribute_tensor(minitorch.zeros(7, 5, dtype=minitorch.float64), mesh, [Replicate()])}
dcp.load(into, checkpoint_id=ckpt)
res["dcp_rows_local"] = into["rows"].to_local().numpy()
res["dcp_rep"] = into["rep"].numpy()
res["dcp_part"] = into["part"].to_local().numpy()
res["dcp_chunks"] = np.array([str(c.offsets) for c in dcp.FileSystemReader(ckpt).read_metadata()
                              .state_dict_metadata["rows"].chunks])

res["zeros"] = np.array(layout(zeros(5, 3, device_mesh=mesh, placements=[Shard(1)])))

# misuse, in PyTorch's classes and words
res["err_mixed"] = np.array(error(lambda: a + x))
res["err_placements"] = np.array(error(lambda: distribute_tensor(x, mesh, [Shard(0), Shard(1)])))
res["rep_reshape"] = np.array(layout(rep.reshape(35)))  # any op of replicated operands: computed locally
res["rep_getitem_full"] = full(rep[1:3, ::2])
res["err_view"] = np.array(error(lambda: a.view(35)))
res["err_no_strategy"] = np.array(error(lambda: a.cumsum(0)))
res["err_to_partial"] = np.array(error(lambda: a.redistribute(mesh, [Partial()])))
res["err_distribute_dtensor"] = np.array(error(lambda: distribute_tensor(a, mesh, [Shard(0)])))
res["err_shard_dim"] = np.array(error(lambda: distribute_tensor(x, mesh, [Shard(2)])))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
