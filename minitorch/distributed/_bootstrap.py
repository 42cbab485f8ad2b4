"""What each process of minitorch.distributed.run runs first: torchrun's RANK and LOCAL_RANK from
MPICH's process-manager variables, then the script as __main__ (MPI itself starts later, in
init_process_group)."""
import os
import runpy
import sys


def main() -> None:
    rank = os.environ.get("PMI_RANK", "0")
    os.environ["RANK"] = rank
    os.environ["LOCAL_RANK"] = os.environ.get("MPI_LOCALRANKID", rank)
    args = sys.argv[1:]
    if args and args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
