"""The emulated NCCL's calls straight from _C_cuda_emu, with no MPI: `nccl_raw.py <unique id hex>
<rank> <nranks> <mode>`. big: collectives and a grouped exchange of messages larger than the
emulation's slots and mailboxes, checked here against NumPy (prints OK); peer_exit: rank 1 leaves
after joining, rank 0's all_reduce must fail (prints the error and the seconds it took)."""
import os
import sys
import time

import numpy as np

import minitorch

uid, r, n, mode = bytes.fromhex(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
c = minitorch.cuda._C_cuda
comm = c.nccl_comm_init(0, n, uid, r, 20.0)
F32, F64 = 7, 8
ALL_REDUCE, BROADCAST, REDUCE, ALL_GATHER, REDUCE_SCATTER, SEND, RECV = range(7)


def dev(a):
    return minitorch.from_numpy(np.ascontiguousarray(a)).to("cuda")


if mode == "peer_exit":
    if r == 1:
        os._exit(0)
    t = minitorch.ones(8, device="cuda")
    t0 = time.monotonic()
    try:
        c.nccl_run(comm, 0, ALL_REDUCE, t.data_ptr(), t.data_ptr(), 8, F32, 0, 0)
        print("no error")
    except RuntimeError as e:
        print(f"ERR {time.monotonic() - t0:.2f} {e}")
    sys.exit(0)

m = 700_000  # 2.8 MB of float32: three steps of a 1 MiB slot
xs = [np.random.default_rng(k).standard_normal(m).astype(np.float32) for k in range(n)]
t = dev(xs[r])
c.nccl_run(comm, 0, ALL_REDUCE, t.data_ptr(), t.data_ptr(), m, F32, 0, 0)
want = xs[0].copy()
for k in range(1, n):
    want += xs[k]  # rank order, rounded each step: what the emulation computes
assert np.array_equal(t.cpu().numpy(), want)

rs_in = dev(np.arange(n * 300_000, dtype=np.float64) * (r + 1))
rs_out = minitorch.empty(300_000, dtype=minitorch.float64, device="cuda")
c.nccl_run(comm, 0, REDUCE_SCATTER, rs_in.data_ptr(), rs_out.data_ptr(), 300_000, F64, 4, 0)  # ncclAvg
full = np.arange(n * 300_000, dtype=np.float64) * sum(range(1, n + 1)) / n
np.testing.assert_allclose(rs_out.cpu().numpy(), full[r * 300_000:(r + 1) * 300_000], rtol=1e-12)

ag_out = minitorch.empty(n * m, device="cuda")
c.nccl_run(comm, 0, ALL_GATHER, dev(xs[r]).data_ptr(), ag_out.data_ptr(), m, F32, 0, 0)
assert np.array_equal(ag_out.cpu().numpy(), np.concatenate(xs))

b = dev(xs[r])
c.nccl_run(comm, 0, BROADCAST, b.data_ptr(), b.data_ptr(), m, F32, 0, n - 1)
assert np.array_equal(b.cpu().numpy(), xs[n - 1])

# a ring exchange of 1.2 MB messages (several mailbox parts) in one group: every rank sends first
send = dev(xs[r][:300_000])
got = minitorch.empty(300_000, device="cuda")
c.nccl_group(True)
c.nccl_run(comm, 0, SEND, send.data_ptr(), 0, 300_000, F32, 0, (r + 1) % n)
c.nccl_run(comm, 0, RECV, 0, got.data_ptr(), 300_000, F32, 0, (r - 1) % n)
c.nccl_group(False)
assert np.array_equal(got.cpu().numpy(), xs[(r - 1) % n][:300_000])

# a host pointer is refused, as NCCL refuses it
host = np.ones(4, dtype=np.float32)
try:
    c.nccl_run(comm, 0, ALL_REDUCE, host.ctypes.data, host.ctypes.data, 4, F32, 0, 0)
    print("host pointer accepted")
except RuntimeError as e:
    assert "invalid argument" in str(e) and "not memory of device 0" in str(e), e
c.nccl_comm_free(comm)
print("OK")
