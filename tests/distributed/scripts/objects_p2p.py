"""The object collectives, batched point-to-point, reduce_scatter of a list, monitored_barrier and
the rank queries on every rank; results to <out>/rank<r>.npz. Arguments: <out> [mode]: mode
"monitor_missing" has rank 1 skip a monitored_barrier (rank 0 records what it raised)."""
import datetime
import os
import sys
import time

import numpy as np

import minitorch
import minitorch.distributed as dist

out = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "all"
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
res = {}


def save():
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)


if mode == "monitor_missing":
    t0 = time.monotonic()
    if r != 1:
        try:
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=1), wait_all_ranks=r == 0)
        except RuntimeError as e:
            res["error"] = np.array(str(e))
            res["kind"] = np.array(type(e).__name__)
    else:  # stuck long past rank 0's timeout, and never calls; then leaves without MPI_Finalize,
        time.sleep(4)  # as a dead rank would (rank 0's receive from it stays pending)
    res["seconds"] = np.array(time.monotonic() - t0)
    save()
    if r == 1:
        os._exit(0)
    sys.exit(0)

# objects of every rank, of different sizes (a payload of r + 1 strings)
mine = {"rank": r, "words": ["w%d" % i for i in range(r + 1)], "arr": np.arange(r + 2)}
got = [None] * n if r == 1 % n else None
dist.gather_object(mine, got, dst=1 % n)
if r == 1 % n:
    res["gather_object_ranks"] = np.array([g["rank"] for g in got])
    res["gather_object_words"] = np.array([len(g["words"]) for g in got])
    res["gather_object_arr_sums"] = np.array([int(g["arr"].sum()) for g in got])

slot = [None]
dist.scatter_object_list(slot, [("to", q, "x" * (5 * q)) for q in range(n)] if r == 0 else None, src=0)
res["scatter_object"] = np.array([slot[0][1], len(slot[0][2])])

# objects from rank 0 to rank 1 (from any source), then back with src=1
if r == 0:
    dist.send_object_list([{"a": 1}, "hello", [1, 2, 3]], dst=1)
    back = [None, None]
    res["recv_object_from"] = np.array(dist.recv_object_list(back, src=1))
    res["recv_object"] = np.array([back[0], back[1]["n"]])
elif r == 1:
    objs = [None, None, None]
    res["recv_object_from"] = np.array(dist.recv_object_list(objs))
    res["recv_object"] = np.array([objs[0]["a"], len(objs[1]), sum(objs[2])])
    dist.send_object_list([7, {"n": 8}], dst=0)

# a ring of batched sends and receives
nxt, prv = (r + 1) % n, (r - 1) % n
send = minitorch.arange(4, dtype=minitorch.float32) + 10 * r
recv = minitorch.zeros(4)
works = dist.batch_isend_irecv([dist.P2POp(dist.isend, send, nxt), dist.P2POp(dist.irecv, recv, prv)])
for w in works:
    w.wait()
res["ring"] = recv.numpy().copy()

# reduce_scatter of a list: input_list[q] = r * 10 + q
out_t = minitorch.zeros(3)
dist.reduce_scatter(out_t, [minitorch.full((3,), float(r * 10 + q)) for q in range(n)])
res["reduce_scatter"] = out_t.numpy().copy()
out_m = minitorch.zeros(3)
dist.reduce_scatter(out_m, [minitorch.full((3,), float(r * 10 + q)) for q in range(n)], op=dist.ReduceOp.MAX)
res["reduce_scatter_max"] = out_m.numpy().copy()

dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
dist.monitored_barrier(wait_all_ranks=True)

g = dist.new_group([n - 1, 0])
res["pg_count"] = np.array(dist.get_pg_count())
if g is not dist.GroupMember.NON_GROUP_MEMBER:
    res["group_ranks"] = np.array(dist.get_process_group_ranks(g))
    res["global_of_1"] = np.array(dist.get_global_rank(g, 1))
    res["group_rank_of_me"] = np.array(dist.get_group_rank(g, r))
res["world_ranks"] = np.array(dist.get_process_group_ranks(dist.group.WORLD))
# on the default group the rank translations are the identity (PyTorch 2's, not a ValueError)
res["world_translations"] = np.array([dist.get_global_rank(dist.group.WORLD, n - 1),
                                      dist.get_group_rank(dist.group.WORLD, r)])
res["elastic"] = np.array(dist.is_torchelastic_launched())
res["local_rank"] = np.array(dist.get_node_local_rank())
dist.destroy_process_group()
save()
