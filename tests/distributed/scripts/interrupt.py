"""A rank that runs all_reduce until it is interrupted: `interrupt.py <out>`. It writes
<out>/rank<r>.json (its pid, session, process group and autogroup) once its group is up, and
<out>/rank<r>.interrupted when KeyboardInterrupt reached it, then lets it end the process."""
import json
import os
import sys

import minitorch
import minitorch.distributed as dist

out = sys.argv[1]
dist.init_process_group("gloo")
r = dist.get_rank()
t = minitorch.ones(1 << 12)
dist.all_reduce(t)
try:
    with open("/proc/self/autogroup") as f:
        autogroup = f.read().split()[0]
except OSError:
    autogroup = ""
info = dict(pid=os.getpid(), sid=os.getsid(0), pgid=os.getpgid(0), autogroup=autogroup,
            relay=dist._session._relay.pid if dist._session._relay is not None else -1)
with open(f"{out}/rank{r}.json.tmp", "w") as f:
    json.dump(info, f)
os.replace(f"{out}/rank{r}.json.tmp", f"{out}/rank{r}.json")
try:
    while True:
        dist.all_reduce(t)
except KeyboardInterrupt:
    open(f"{out}/rank{r}.interrupted", "w").close()
    raise
