"""Saves torchrun's variables as the launcher set them, and the rank MPI gives."""
import os
import sys

import numpy as np

import minitorch.distributed as dist

dist.init_process_group()
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
res = {k: np.array(os.environ[k]) for k in keys}
res["argv"] = np.array(sys.argv[2:])
res["name"] = np.array(__name__)
res["mpi_rank"] = np.array(dist.get_rank())
res["backend"] = np.array(dist.get_backend())
np.savez(f"{sys.argv[1]}/rank{dist.get_rank()}.npz", **res)
dist.destroy_process_group()
