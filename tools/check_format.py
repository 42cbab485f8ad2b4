"""Checks the C and CUDA sources (csrc/, cuda/) against .clang-format: prints how many files and
lines `clang-format` would change, file by file, and exits 1 if any; with --fix, formats them in
place. `make format-check` and `make format` run it with the pinned clang-format.

Run: python tools/check_format.py CLANG_FORMAT [--quiet | --fix]
"""
import difflib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATTERNS = ["csrc/*.c", "csrc/*.h", "cuda/*.c", "cuda/*.h", "cuda/*.cu", "cuda/*.cuh", "cuda/*.cc"]


def sources():
    """The tracked C and CUDA sources (git ls-files: what CI's clone has)."""
    out = subprocess.run(["git", "ls-files", *PATTERNS], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def changed_lines(clang_format: str, path: str) -> int:
    """How many lines clang-format would remove or add in the file."""
    text = (ROOT / path).read_text()
    out = subprocess.run([clang_format, "--style=file", f"--assume-filename={path}"], cwd=ROOT, input=text,
                         capture_output=True, text=True, check=True).stdout
    diff = difflib.unified_diff(text.splitlines(), out.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))


def main() -> int:
    clang_format, quiet = sys.argv[1], "--quiet" in sys.argv[2:]
    files = sources()
    if "--fix" in sys.argv[2:]:
        # Twice: clang-format does not always reach its own fixed point in one pass (an X-macro
        # list such as MT_DTYPES is laid out anew by the second).
        for _ in range(2):
            subprocess.run([clang_format, "--style=file", "-i", *files], cwd=ROOT, check=True)
        return 0
    counts = {path: changed_lines(clang_format, path) for path in files}
    bad = {path: n for path, n in counts.items() if n}
    if not quiet:
        for path, n in sorted(bad.items(), key=lambda kv: -kv[1]):
            print(f"{n:6d}  {path}")
    print(f"clang-format would change {len(bad)} of {len(files)} files, {sum(bad.values())} lines "
          f"(removed and added); `make format` applies it")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
