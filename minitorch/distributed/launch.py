"""`python -m minitorch.distributed.launch --nproc-per-node N script.py [args]`, as the deprecated
torch.distributed.launch: minitorch.distributed.run's launcher, except that, unless --use-env is
given, each process's script gets --local-rank=<its local rank> as its first argument (the
legacy way to learn it; LOCAL_RANK is set either way). Warns with PyTorch's FutureWarning."""
from __future__ import annotations

import sys
import warnings
from typing import List, Optional

from minitorch.distributed import run as _run

_DEPRECATED = (
    "The module torch.distributed.launch is deprecated\n"
    "and will be removed in future. Use torchrun.\n"
    "Note that --use-env is set by default in torchrun.\n"
    "If your script expects `--local-rank` argument to be set, please\n"
    "change it to read from `os.environ['LOCAL_RANK']` instead. See \n"
    "https://pytorch.org/docs/stable/distributed.html#launch-utility for \n"
    "further instructions\n"
)


def parse_args(args: Optional[List[str]]):
    parser = _run._parser()
    parser.prog = "python -m minitorch.distributed.launch"
    parser.add_argument("--use-env", "--use_env", default=False, action="store_true",
                        help="pass the local rank in LOCAL_RANK only, not as --local-rank")
    return parser.parse_args(args)


def launch(args) -> int:
    if args.no_python and not args.use_env:
        raise ValueError("When using the '--no-python' flag, you must also set the '--use-env' flag.")
    return _run.run(args)


def main(args: Optional[List[str]] = None) -> int:
    warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
    return launch(parse_args(args))


if __name__ == "__main__":
    sys.exit(main())
