#!/usr/bin/env bash
# valgrind memcheck over tests/leaks/valgrind_script.py: fails if a block is definitely lost
# with a frame of minitorch's _C or _C_cuda extension in its allocation stack. The interpreter's
# own blocks lost at exit (PYTHONMALLOC=malloc makes every object a malloc block valgrind sees)
# have no such frame and are ignored; valgrind-python.supp drops the common ones from the log.
# Needs the ordinary (not the sanitizer) build. Usage: tests/leaks/valgrind_check.sh [python]
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${1:-${PYTHON:-python3}}
PYTHON=$("$PYTHON" -c 'import sys; print(sys.executable)') # the interpreter, not a pyenv shim
log=$(mktemp /tmp/minitorch-valgrind.XXXXXX)
trap 'rm -f "$log"' EXIT
PYTHONMALLOC=malloc PYTHONPATH=. valgrind --tool=memcheck --leak-check=full \
    --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=50 \
    --suppressions=tests/leaks/valgrind-python.supp --log-file="$log" \
    "$PYTHON" tests/leaks/valgrind_script.py
"$PYTHON" - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# one loss record: from its "definitely lost" line to the blank line that ends its stack
records = re.findall(r"==\d+== [\d,]+ .*?definitely lost.*?\n(?:==\d+== +(?:at|by) .*\n)+", text)
ours = [r for r in records if re.search(r"minitorch/_C(_cuda)?\.|\(csrc/|\(cuda/| mt_", r)]
summary = re.search(r"definitely lost: .*", text)
print("valgrind:", summary.group(0) if summary else "no leak summary", f"; {len(records)} records,",
      f"{len(ours)} from minitorch's C code")
for r in ours:
    print(r)
if "ERROR SUMMARY" not in text:
    print(text[-3000:])
    sys.exit("valgrind did not finish")
sys.exit(1 if ours else 0)
PY
