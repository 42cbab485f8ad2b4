"""Distributed autograd and DistributedOptimizer over RPC, with the library named by PROGRAM_TORCH
(minitorch, or PyTorch for the reference): rank 0 drives calls to the other workers inside
dist_autograd contexts (two at once, from two threads) and prints the gradients every worker
holds, rounded, so that the two libraries' outputs can be compared line by line. Inputs are
fixed (no random draws)."""
import importlib
import os
import sys
import threading

torch = importlib.import_module(os.environ.get("PROGRAM_TORCH", "minitorch"))
rpc = importlib.import_module(torch.__name__ + ".distributed.rpc")
dist_autograd = importlib.import_module(torch.__name__ + ".distributed.autograd")
DistributedOptimizer = importlib.import_module(torch.__name__ + ".distributed.optim").DistributedOptimizer
mp = torch.multiprocessing
nn = torch.nn


def show(name, t):
    print(name, None if t is None else [round(v, 5) for v in t.detach().reshape(-1).tolist()])


def grads_of(context_id, tensors):
    grads = dist_autograd.get_gradients(context_id)
    return [grads.get(t) for t in tensors]


class ParameterServer:
    """As pytorch/examples' rpc/parameter_server: the model lives here; trainers call forward."""

    def __init__(self):
        self.model = nn.Linear(3, 2)
        with torch.no_grad():
            self.model.weight.copy_(torch.arange(6.0).reshape(2, 3) / 10)
            self.model.bias.copy_(torch.tensor([0.5, -0.5]))

    def forward(self, x):
        return self.model(x).tanh()

    def param_rrefs(self):
        return [rpc.RRef(p) for p in self.model.parameters()]

    def grads(self, context_id):
        got = dist_autograd.get_gradients(context_id)
        return [got.get(p) for p in self.model.parameters()]

    def params(self):
        return [p.detach().clone() for p in self.model.parameters()]


def call_method(method, rref, *args):
    return method(rref.local_value(), *args)


def square_back(t, caller):
    """On worker1: t * 3, then a call back to the caller, nested in the same context."""
    u = t * 3
    return rpc.rpc_sync(caller, torch.mul, args=(u, u)) + t


def both(a, b):
    return {"sum": a + b, "prod": a * b, "label": "pair", "plain": torch.ones(2)}


# two contexts of worker0 at once: thread A's backward reaches worker1, whose part waits (at most
# 20 s) until thread B, on worker0, ran a backward of its own context and said so
_b_done = threading.Event()
_a_waiting = threading.Event()


class WaitForB(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t * 2

    @staticmethod
    def backward(ctx, g):
        _a_waiting.set()
        _seen.append(_b_done.wait(20))
        return g * 2


_seen = []


def waits_for_b(t):
    return WaitForB.apply(t)


def a_waiting():
    return _a_waiting.wait(0.05)


def b_done():
    _b_done.set()


def b_seen():
    return list(_seen)


def concurrent_contexts():
    """Thread A: a context whose backward goes through worker1; thread B: a local one, run while
    A's waits on worker1 (which B releases). Serialized backward passes would keep B waiting."""
    out = {}

    def a():
        t = torch.tensor([1.0, -2.0], requires_grad=True)
        with dist_autograd.context() as cid:
            y = rpc.rpc_sync("worker1", waits_for_b, args=(t,))
            dist_autograd.backward(cid, [(y * y).sum()])
            out["a"] = dist_autograd.get_gradients(cid)[t]

    def b():
        for _ in range(400):  # until A's backward waits on worker1
            if rpc.rpc_sync("worker1", a_waiting):
                break
        x = torch.tensor([3.0, 4.0], requires_grad=True)
        with dist_autograd.context() as cid:
            dist_autograd.backward(cid, [(x * x * x).sum()])
            out["b"] = dist_autograd.get_gradients(cid)[x]
        rpc.rpc_sync("worker1", b_done)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    show("concurrent A", out.get("a"))
    show("concurrent B", out.get("b"))
    print("worker1 saw B done while A's backward waited", rpc.rpc_sync("worker1", b_seen))


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=60)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world_size, rpc_backend_options=opts)
    if rank == 0:
        t1 = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        t2 = torch.tensor([0.5, -1.0, 4.0], requires_grad=True)
        with dist_autograd.context() as cid:  # no RPC: the gradients are kept in the context only
            print("context id", cid >> 48, cid == dist_autograd._retrieve_context(cid)._context_id())
            dist_autograd.backward(cid, [(t1 * t2).sum()])
            for g in grads_of(cid, [t1, t2]):
                show("local", g)
            print("grad untouched", t1.grad is None, t2.grad is None)
        with dist_autograd.context() as cid:  # rpc_sync of a builtin
            ret = rpc.rpc_sync("worker1", torch.mul, args=(t1, t2))
            print("ret requires grad", ret.requires_grad)
            dist_autograd.backward(cid, [(ret * ret).sum()])
            for g in grads_of(cid, [t1, t2]):
                show("rpc_sync mul", g)
        with dist_autograd.context() as cid:  # a nested call back, and rpc_async
            out = rpc.rpc_sync("worker1", square_back, args=(t1, "worker0"))
            fut = rpc.rpc_async("worker1", torch.sin, args=(t2,))
            dist_autograd.backward(cid, [out.sum() + fut.wait().sum()])
            for g in grads_of(cid, [t1, t2]):
                show("nested", g)
        with dist_autograd.context() as cid:  # containers in the reply, and a value needing no grad
            got = rpc.rpc_sync("worker1", both, args=(t1, t2))
            print("reply", sorted(got), got["label"], got["plain"].requires_grad, got["prod"].requires_grad)
            dist_autograd.backward(cid, [got["sum"].sum() * got["prod"].sum()])
            for g in grads_of(cid, [t1, t2]):
                show("dict reply", g)
        with dist_autograd.context() as cid:  # remote() then to_here(): gradients pushed back
            rref = rpc.remote("worker1", torch.mul, args=(t1, t2))
            v = rref.to_here()
            dist_autograd.backward(cid, [(v * torch.tensor([1.0, 2.0, 3.0])).sum()])
            for g in grads_of(cid, [t1, t2]):
                show("remote to_here", g)
        # parameter server: the trainer's inputs need no grad; the server's parameters get them
        ps = rpc.remote("worker1", ParameterServer)
        x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 2.0]])
        target = torch.tensor([[0.1, 0.2], [0.3, -0.4]])
        opt = DistributedOptimizer(torch.optim.SGD, rpc.rpc_sync("worker1", call_method,
                                                                  args=(ParameterServer.param_rrefs, ps)), lr=0.5)
        head = nn.Linear(2, 1)
        with torch.no_grad():
            head.weight.copy_(torch.tensor([[0.3, -0.7]]))
            head.bias.fill_(0.1)
        opt_all = DistributedOptimizer(torch.optim.SGD, [rpc.RRef(p) for p in head.parameters()], lr=0.5)
        for step in range(2):
            with dist_autograd.context() as cid:
                out = rpc.rpc_sync("worker1", call_method, args=(ParameterServer.forward, ps, x))
                loss = ((out - target) ** 2).mean() + head(out).sum()
                dist_autograd.backward(cid, [loss])
                for g in rpc.rpc_sync("worker1", call_method, args=(ParameterServer.grads, ps, cid)):
                    show(f"ps grad {step}", g)
                for g in grads_of(cid, list(head.parameters())):
                    show(f"head grad {step}", g)
                opt.step(cid)
                opt_all.step(cid)
            for p in rpc.rpc_sync("worker1", call_method, args=(ParameterServer.params, ps)):
                show(f"ps param {step}", p)
            show(f"head weight {step}", head.weight)
        concurrent_contexts()
        # errors as PyTorch words them
        with dist_autograd.context() as cid:
            try:
                with dist_autograd.context():
                    pass
            except RuntimeError as e:
                print("nested context:", e)
            for roots in ([], [torch.ones(3, 3)], [torch.ones(3, 3, requires_grad=True)],
                          [torch.ones(1, requires_grad=True)]):
                try:
                    dist_autograd.backward(cid, roots)
                except RuntimeError as e:
                    print("backward:", str(e).strip().splitlines()[0])
        try:
            dist_autograd.get_gradients(cid)
        except RuntimeError as e:
            print("after the context:", str(e).splitlines()[0])
    rpc.shutdown()


if __name__ == "__main__":
    mp.spawn(run, args=(int(sys.argv[1]), int(sys.argv[2])), nprocs=int(sys.argv[1]), join=True)
