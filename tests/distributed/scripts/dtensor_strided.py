"""DTensor's _StridedShard with the library named by PROGRAM_TORCH (minitorch, or PyTorch for the
reference; gloo on the CPU): views that flatten a sharded dimension behind another and split it
back, distribute_tensor, redistribute and full_tensor with _StridedShard placements on 1-D and
(4 ranks) 2-D meshes, an op that is not a view on one, and gradients through them. Each rank
gives placements, local values and checks, which rank 0 prints, so that the two libraries' outputs can
be compared."""
import importlib
import os
import sys

torch = importlib.import_module(os.environ.get("PROGRAM_TORCH", "minitorch"))
dist = importlib.import_module(torch.__name__ + ".distributed")
tensor = importlib.import_module(torch.__name__ + ".distributed.tensor")
_StridedShard = importlib.import_module(torch.__name__ + ".distributed.tensor.placement_types")._StridedShard
init_device_mesh = importlib.import_module(torch.__name__ + ".distributed.device_mesh").init_device_mesh
Shard, Replicate, distribute_tensor = tensor.Shard, tensor.Replicate, tensor.distribute_tensor


def run(rank, n, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=n)
    lines = []

    def show(name, d):
        lines.append(f"{name} {tuple(d.placements)} {tuple(d.shape)} {d.to_local().reshape(-1).tolist()}")

    def attempt(name, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - printed for the comparison
            lines.append(f"{name} {type(e).__name__}: {str(e).splitlines()[0]}")

    m1 = init_device_mesh("cpu", (n,))
    x = torch.arange(24.0).reshape(4, 6)
    v = distribute_tensor(x, m1, [Shard(1)]).view(24)
    show("view24", v)
    lines.append(f"full {v.full_tensor().tolist() == list(range(24))}")
    show("back", v.view(4, 6))
    show("back2", v.view(2, 2, 6))
    show("double", v * 2 + v)
    lines.append(f"sum {v.sum().full_tensor().item()}")
    show("to Shard", v.redistribute(m1, [Shard(0)]))
    show("reshape30", distribute_tensor(torch.arange(30.0).reshape(5, 6), m1, [Shard(1)]).reshape(30))
    show("uneven last", distribute_tensor(torch.arange(20.0).reshape(4, 5), m1, [Shard(1)]).view(20))
    z = torch.arange(24.0).reshape(2, 3, 4)
    show("flatten(1)", distribute_tensor(z, m1, [Shard(2)]).flatten(1))
    attempt("flatten all", lambda: distribute_tensor(z, m1, [Shard(1)]).flatten())
    d = distribute_tensor(torch.arange(16.0), m1, [_StridedShard(0, split_factor=2)])
    show("distribute", d)
    lines.append(f"distribute full {d.full_tensor().tolist() == list(range(16))}")
    show("strided from Shard", distribute_tensor(torch.arange(16.0), m1, [Shard(0)]).redistribute(
        m1, [_StridedShard(0, split_factor=2)]))
    # gradients through the view and a redistribution
    w = torch.arange(24.0).reshape(4, 6).requires_grad_()
    dw = distribute_tensor(w, m1, [Shard(1)])
    f = dw.view(24)
    (f * f).sum().full_tensor().backward()
    lines.append(f"grad {dw.grad.full_tensor().reshape(-1).tolist()}")  # (its layout is each library's own)
    if n == 4:
        m2 = init_device_mesh("cpu", (2, 2))
        x = torch.arange(64.0).reshape(8, 8)
        d = distribute_tensor(x, m2, [_StridedShard(0, split_factor=2), Shard(0)])
        show("2d strided", d)
        lines.append(f"2d full {d.full_tensor().equal(x)}")
        show("2d to R,S0", d.redistribute(m2, [Replicate(), Shard(0)]))
        show("2d to S0,S0", d.redistribute(m2, [Shard(0), Shard(0)]))
        show("2d from S0,S0", distribute_tensor(x, m2, [Shard(0), Shard(0)]).redistribute(
            m2, [_StridedShard(0, split_factor=2), Shard(0)]))
        y = torch.arange(24.0).reshape(4, 6)
        show("2d view S0,S1", distribute_tensor(y, m2, [Shard(0), Shard(1)]).view(24))
        show("2d view S1,S0", distribute_tensor(y, m2, [Shard(1), Shard(0)]).view(24))
        show("2d view S1,S1", distribute_tensor(torch.arange(32.0).reshape(4, 8), m2, [Shard(1), Shard(1)]).view(32))
        show("2d view back", distribute_tensor(y, m2, [Shard(1), Shard(0)]).view(24).view(4, 6))
    every = [None] * n
    dist.all_gather_object(every, lines)
    if rank == 0:
        for r, theirs in enumerate(every):
            for line in theirs:
                print(r, line, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    torch.multiprocessing.spawn(run, args=(int(sys.argv[1]), int(sys.argv[2])), nprocs=int(sys.argv[1]), join=True)
