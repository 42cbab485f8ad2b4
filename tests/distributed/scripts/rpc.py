"""Two or three RPC workers started by mp.spawn, with the library named by PROGRAM_TORCH (minitorch,
or PyTorch for the reference): rank 0 prints what each call gives back, in an order that does not
depend on timing, so that the two libraries' outputs can be compared line by line."""
import importlib
import os
import sys
import threading

torch = importlib.import_module(os.environ.get("PROGRAM_TORCH", "minitorch"))
rpc = torch.distributed.rpc
mp = torch.multiprocessing


class Counter:
    def __init__(self, start):
        self.n = start

    def add(self, k):
        self.n += k
        return self.n

    def tensor(self):
        return torch.full((2,), float(self.n))


def boom(kind):
    raise kind("boom")


def ask_back(rref, k):
    """Runs on worker1: calls back the owner of rref (worker0) while worker0 waits on this call."""
    return rref.rpc_sync().add(k), rref.is_owner(), rref.owner().name


def owner_side(rref):
    return rref.is_owner(), rref.local_value().n


def whoami():
    return rpc.get_worker_info().name


class Batcher:
    """As the batch-updating parameter server: callers get a Future that a later call completes."""
    lock = threading.Lock()
    pending = []

    @staticmethod
    @rpc.functions.async_execution
    def join(x):
        fut = torch.futures.Future()
        with Batcher.lock:
            Batcher.pending.append((fut, x))
            if len(Batcher.pending) == 2:
                total = sum(v for _, v in Batcher.pending)
                for f, _ in Batcher.pending:
                    f.set_result(total)
                Batcher.pending = []
        return fut


def run(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=60)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world_size, rpc_backend_options=opts)
    if rank == 0:
        print(rpc.get_worker_info(), rpc.get_worker_info("worker1"), rpc.get_worker_info("worker1").id)
        print(rpc.rpc_sync("worker1", torch.add, args=(torch.ones(2), 3)))
        print(rpc.rpc_sync(1, whoami), rpc.rpc_sync(rpc.get_worker_info("worker1"), whoami),
              rpc.rpc_sync("worker0", whoami))
        fut = rpc.rpc_async(1, torch.mul, args=(torch.ones(2),), kwargs={"other": 4})
        print(fut.wait(), fut.done())
        print(torch.futures.wait_all([rpc.rpc_async(1, pow, args=(2, k)) for k in range(4)]))
        print(fut.then(lambda f: f.value().sum().item()).wait())
        rref = rpc.remote("worker1", Counter, args=(5,))
        print(rref.owner(), rref.owner_name(), rref.is_owner(), rref.to_here().n)
        print(rref.rpc_sync().add(2), rref.rpc_async().add(1).wait(), rref.remote().tensor().to_here())
        print(rpc.rpc_sync(1, owner_side, args=(rref,)))
        mine = rpc.RRef(Counter(100))
        print(mine.is_owner(), mine.owner(), mine.local_value().n, mine.to_here().n)
        print(rpc.rpc_sync(1, ask_back, args=(mine, 10)), mine.local_value().n)
        for kind in (ValueError, RuntimeError):
            try:
                rpc.rpc_sync(1, boom, args=(kind,))
            except kind as e:
                lines = str(e).rstrip().splitlines()
                print("caught", type(e).__name__, lines[:2], any(line.endswith("Error: boom") for line in lines))
        # PyTorch's future raises a ValueError or TypeError as that class, any other as RuntimeError
        # named after it (a KeyError's message quoted, as str() of a KeyError is)
        for kind in (KeyError, IndexError, UnicodeError, TypeError):
            for call in (rpc.rpc_sync, lambda *a, **k: rpc.rpc_async(*a, **k).wait()):
                try:
                    call(1, boom, args=(kind,))
                except Exception as e:
                    print("caught", kind.__name__, "as", type(e).__name__, str(e)[:52])
        bad = rpc.remote(1, boom, args=(ValueError,))
        try:
            bad.to_here()
        except ValueError as e:
            print("remote raised", str(e).splitlines()[:2])
        try:
            rref.local_value()
        except RuntimeError as e:
            print("local_value:", e)
        futs = [rpc.rpc_async(r, Batcher.join, args=(r * 10,)) for r in (1, 1)]
        print([f.wait() for f in futs])
    rpc.shutdown()


if __name__ == "__main__":
    mp.spawn(run, args=(int(sys.argv[1]), int(sys.argv[2])), nprocs=int(sys.argv[1]), join=True)
