"""A script for the legacy launcher: its local rank from the --local-rank argument (argparse's
--local_rank spelling too), as the pre-torchrun DDP examples read it; saved with LOCAL_RANK."""
import argparse
import os

import numpy as np

import minitorch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", "--local_rank", type=int, default=-1)
parser.add_argument("out")
parser.add_argument("rest", nargs="*")
args = parser.parse_args()
dist.init_process_group(backend="gloo", init_method="env://")
np.savez(f"{args.out}/rank{dist.get_rank()}.npz", local_rank_arg=np.array(args.local_rank),
         local_rank_env=np.array(int(os.environ["LOCAL_RANK"])), rest=np.array(args.rest))
dist.destroy_process_group()
