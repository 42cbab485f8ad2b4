"""The polynomial fits of csrc/cpu/vmath.h's erf, and their ULP errors over float32s.

    python3 tools/fit_vmath.py            # prints the coefficients (needs SciPy for erf, erfcx)
    python3 tools/fit_vmath.py --ulps 61  # max ULP error of vmath.h's float32 functions over
                                          # every 61st float32 (1: all 2^32), against double libm

The fits are Chebyshev interpolants in double at 6000 Chebyshev nodes (near-minimax), converted
to monomial coefficients for Horner's rule: erf(a) = a + a (P(a^2) - 1) for a < 1, P of degree 6,
and erfcx(a) = exp(a^2) erfc(a) = Q(1 / (1 + a)) for 1 <= a < 3.92, Q of degree 7. The ULP
check compiles a small C program around vmath.h with the C compiler on PATH.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from numpy.polynomial import chebyshev

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fit(f, lo, hi, deg, n=6000):
    k = np.arange(n)
    x = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)
    return chebyshev.cheb2poly(chebyshev.chebfit(x, f(x), deg))[::-1]  # highest power first


def coefficients():
    from scipy.special import erf, erfcx

    p = fit(lambda u: erf(np.sqrt(u)) / np.sqrt(u), 1e-14, 1.0, 6)
    p[-1] -= 1.0  # P - 1
    q = fit(lambda t: erfcx(1 / t - 1), 1 / (1 + 3.92), 0.5, 7)
    for name, c in (("P - 1", p), ("Q", q)):
        print(name, ", ".join(f"{v:.9e}f" for v in c))


ULP_C = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "cpu/vmath.h"
static double ulp_of(double r) {
    double a = fabs(r);
    int e;
    if (a < 0x1p-126) return 0x1p-149;
    frexp(a, &e);
    return ldexp(1.0, e - 24);
}
#define CHECK(name, f, ref)                                                               \
    {                                                                                     \
        double worst = 0; float wx = 0; long bad = 0;                                     \
        for (uint64_t b = 0; b < (1ull << 32); b += step) {                               \
            uint32_t u = (uint32_t)b; float x; memcpy(&x, &u, 4);                         \
            float r = f(x); double d = ref((double)x);                                    \
            if (isnan(d) || isnan(r) || isinf(d) || isinf(r) || isinf((float)d)) {        \
                bad += !(isnan(d) && isnan(r)) && (float)d != r;                          \
                continue;                                                                 \
            }                                                                             \
            double e = fabs((double)r - d) / ulp_of(d);                                   \
            if (e > worst) { worst = e; wx = x; }                                         \
        }                                                                                 \
        printf("%-6s max %.3f ulp at x = %a, %ld special values differ\n", name, worst, wx, bad); \
    }
int main(int argc, char **argv) {
    uint64_t step = (uint64_t)atoll(argv[1]);
    CHECK("exp", mt_vexp_f32, exp) CHECK("tanh", mt_vtanh_f32, tanh)
    CHECK("log", mt_vlog_f32, log) CHECK("log1p", mt_vlog1p_f32, log1p) CHECK("erf", mt_verf_f32, erf)
    return 0;
}
"""


def ulps(step):
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "ulp.c"), os.path.join(d, "ulp")
        with open(src, "w") as f:
            f.write(ULP_C)
        subprocess.run(["cc", "-O2", "-std=c11", "-fno-trapping-math", "-I", os.path.join(ROOT, "csrc"),
                        src, "-o", exe, "-lm"], check=True)
        subprocess.run([exe, str(step)], check=True)


if __name__ == "__main__":
    if "--ulps" in sys.argv:
        ulps(int(sys.argv[sys.argv.index("--ulps") + 1]))
    else:
        coefficients()
