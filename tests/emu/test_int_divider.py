"""cuda/int_divider.h on the host (the same code the kernels run, compiled by gcc): the fast
divider's quotient equals C's over edge values (divisors 1, 2^k - 1, 2^k, 2^k + 1 up to 2^31,
primes, random; numerators 0, around each multiple of the divisor, around 2^31 - 1, random), and
the magic number fits in 32 bits. Skips without gcc."""
import os
import shutil
import subprocess

import pytest
from emu_build import plain_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

#include "cuda/int_divider.h"

static long failures, checked;

static void check(uint32_t d, uint32_t n)
{
    if (n >= MT_CUDA_DIVIDER_MAX) {
        return;
    }
    const mt_cuda_divider v = mt_cuda_divider_of(d);
    const uint32_t q = mt_cuda_div(v, n);
    checked++;
    if (q != n / d || v.divisor != d) {
        if (failures++ < 10) {
            printf("FAIL %u / %u: %u, not %u\n", n, d, q, n / d);
        }
    }
}

static void around(uint32_t d, uint32_t n)
{
    for (int64_t m = (int64_t)n - 2; m <= (int64_t)n + 2; m++) {
        if (m >= 0) {
            check(d, (uint32_t)m);
        }
    }
}

static void divisor(uint32_t d)
{
    around(d, 0);
    around(d, d);
    around(d, 2 * (uint64_t)d < MT_CUDA_DIVIDER_MAX ? 2 * d : d);
    around(d, MT_CUDA_DIVIDER_MAX - 1);
    around(d, (MT_CUDA_DIVIDER_MAX - 1) / d * d);
    for (int i = 0; i < 200; i++) {
        check(d, (uint32_t)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) % MT_CUDA_DIVIDER_MAX));
    }
}

int main(void)
{
    srand(22);
    for (int k = 0; k <= 31; k++) {
        const uint64_t p = (uint64_t)1 << k;
        if (p > 1) {
            divisor((uint32_t)(p - 1));
        }
        divisor((uint32_t)p);
        if (p + 1 <= MT_CUDA_DIVIDER_MAX) {
            divisor((uint32_t)(p + 1));
        }
    }
    const uint32_t primes[] = {3, 5, 7, 11, 13, 641, 65521, 6700417, 2147483647u};
    for (unsigned i = 0; i < sizeof(primes) / sizeof(primes[0]); i++) {
        divisor(primes[i]);
    }
    for (int i = 0; i < 2000; i++) {
        divisor(1 + (uint32_t)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) % MT_CUDA_DIVIDER_MAX));
    }
    for (uint32_t d = 1; d <= 300; d++) { /* small divisors: every numerator up to 5000 */
        for (uint32_t n = 0; n <= 5000; n++) {
            check(d, n);
        }
    }
    printf("%ld checked, %ld failed\n", checked, failures);
    return failures != 0;
}
"""


def test_fast_divider_matches_division(tmp_path):
    gcc = shutil.which(os.environ.get("CC", "gcc"))
    if gcc is None:
        pytest.skip("no gcc")
    src, exe = tmp_path / "divider.c", tmp_path / "divider"
    src.write_text(PROGRAM)
    subprocess.run([gcc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I" + ROOT, str(src), "-o", str(exe)],
                   check=True, env=plain_env())
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=plain_env())
    assert r.returncode == 0 and " 0 failed" in r.stdout, r.stdout + r.stderr
