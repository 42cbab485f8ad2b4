"""What each process of minitorch.distributed.run runs first: torchrun's RANK and LOCAL_RANK from
MPICH's process-manager variables (and, for minitorch.distributed.launch without --use-env, the
script's first argument --local-rank=<LOCAL_RANK>), then the script as __main__ (MPI itself starts later, in
init_process_group), with TORCHELASTIC_ERROR_FILE naming its own error file in the launcher's
folder for them. Its process id, and then its exit status, go to the launcher's status folder
(MINITORCH_RUN_STATUS_DIR): the launcher watches them to stop the other processes when one fails."""
import os
import runpy
import sys
import traceback


def _status_file(rank: str, what: str, value: int) -> None:
    folder = os.environ.get("MINITORCH_RUN_STATUS_DIR")
    if folder:
        path = os.path.join(folder, f"rank{rank}.{what}")
        with open(path + ".tmp", "w") as f:
            f.write(str(value))
        os.replace(path + ".tmp", path)  # the launcher never reads a half-written file


def _exit_code(e: SystemExit) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def main() -> None:
    rank = os.environ.get("PMI_RANK", "0")
    os.environ["RANK"] = rank
    os.environ["LOCAL_RANK"] = os.environ.get("MPI_LOCALRANKID", rank)
    errors = os.environ.pop("MINITORCH_RUN_ERROR_DIR", None)
    if errors:  # torchrun's file per process, which @record (elastic.multiprocessing.errors) writes
        folder = os.path.join(errors, "attempt_0", os.environ["LOCAL_RANK"])
        os.makedirs(folder, exist_ok=True)
        os.environ["TORCHELASTIC_ERROR_FILE"] = os.path.join(folder, "error.json")
    _status_file(rank, "pid", os.getpid())
    args = sys.argv[1:]
    if os.environ.pop("MINITORCH_RUN_LOCAL_RANK_ARG", None) == "1":  # the legacy launcher's argument
        at = 2 if args and args[0] == "-m" else 1
        args[at:at] = [f"--local-rank={os.environ['LOCAL_RANK']}"]
    code = 0
    try:
        if args and args[0] == "-m":
            sys.argv = args[1:]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = args
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e)
    except BaseException:  # noqa: BLE001 - reported as Python reports it, then the status
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    _status_file(rank, "exit", code)
    sys.exit(code)


if __name__ == "__main__":
    main()
