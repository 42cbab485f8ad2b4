"""Rank 1 fails in main(): with `record` (argument "record") its error goes to TORCHELASTIC_ERROR_FILE."""
import os
import sys

from minitorch.distributed.elastic.multiprocessing.errors import record


def main():
    if os.environ["RANK"] == "1":
        raise ValueError("rank 1 found a bad batch")


if __name__ == "__main__":
    (record(main) if sys.argv[2] == "record" else main)()
