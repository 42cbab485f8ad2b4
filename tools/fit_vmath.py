"""The polynomial fits of csrc/cpu/vmath.h's erf and GELU and cpu/vmath_avx512.c's exp, and their
ULP errors over float32s.

    python3 tools/fit_vmath.py            # prints the coefficients (needs SciPy)
    python3 tools/fit_vmath.py --ulps 61  # max ULP error of vmath.h's float32 functions over
                                          # every 61st float32 (1: all 2^32), against double libm,
                                          # as built for x86-64 and for x86-64-v3 (FMA), and
                                          # vmath_avx512.c's exp and log where the CPU has AVX-512

erf(a) = a + a (P(a^2) - 1) for a < 1, P of degree 6, a Chebyshev interpolant at 6000 nodes
(near-minimax); erf(a) = 1 - E(a - 2.46) for 1 <= a < 3.92, E of degree 14 fitted to erfc. GELU's
Phi(x) = 1/2 + x R(x^2) for |x| < 2, R of degree 6, and Phi(-y) = G(y - 3.8) for 2 <= y < 5.55, G
of degree 10. E, R and G are minimax fits: a linear program over 2000 Chebyshev nodes (SciPy's
HiGHS) in the Chebyshev basis, then turned into monomials of the shifted argument for Horner's
rule. The ULP check compiles a small C program around vmath.h with the C compiler on PATH.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from numpy.polynomial import chebyshev, polynomial

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fit(f, lo, hi, deg, n=6000):
    k = np.arange(n)
    x = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)
    return chebyshev.cheb2poly(chebyshev.chebfit(x, f(x), deg))[::-1]  # highest power first


def minimax(f, lo, hi, deg, shift=0.0, weight=None, n=2000):
    """Coefficients (highest power first) of the degree-deg polynomial p in s = v - shift that
    minimises max |weight(v) (p - f(v))| over n Chebyshev nodes v of [lo, hi], and that maximum."""
    from scipy.optimize import linprog

    k = np.arange(n)
    v = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)
    w = np.ones_like(v) if weight is None else weight(v)
    scale = 1e6  # errors near 1e-8 would sit under the solver's tolerances unscaled
    basis = chebyshev.chebvander((2 * v - (lo + hi)) / (hi - lo), deg) * (w * scale)[:, None]
    target, bound = f(v) * w * scale, -np.ones((n, 1))
    # variables: the deg + 1 Chebyshev coefficients and the bound t; minimise t subject to
    # -t <= basis c - target <= t
    res = linprog(np.r_[np.zeros(deg + 1), 1.0], A_ub=np.block([[basis, bound], [-basis, bound]]),
                  b_ub=np.r_[target, -target], bounds=[(None, None)] * (deg + 2), method="highs",
                  options=dict(primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10))
    # Chebyshev coefficients in t = (2v - lo - hi) / (hi - lo), then v = s + shift
    t_of_s = [(2 * shift - lo - hi) / (hi - lo), 2 / (hi - lo)]
    in_s = np.zeros(1)
    for c in chebyshev.cheb2poly(res.x[:-1])[::-1]:
        in_s = polynomial.polyadd(polynomial.polymul(in_s, t_of_s), [c])
    return in_s[::-1], res.x[-1] / scale


def coefficients():
    from scipy.special import erf, erfc

    p = fit(lambda u: erf(np.sqrt(u)) / np.sqrt(u), 1e-14, 1.0, 6)
    p[-1] -= 1.0  # P - 1
    e, e_err = minimax(erfc, 1.0, 3.92, 14, shift=float(np.float32(2.46)))
    r2 = np.sqrt(2.0)
    # Phi - 1/2 = x R(x^2): R in u = x^2, weighted by x (Phi's absolute error)
    r, r_err = minimax(lambda u: 0.5 * erf(np.sqrt(u) / r2) / np.sqrt(u), 1e-12, 4.0, 6, weight=lambda u: np.sqrt(u) / 2)
    g, g_err = minimax(lambda y: 0.5 * erfc(y / r2), 2.0, 3.92 * r2, 10, shift=float(np.float32(3.8)))
    # cpu/vmath_avx512.c's exp: exp(r) = 1 + r + r^2 X(r), |r| <= ln2 / 2, X of degree 4 fitted to
    # (exp(r) - 1 - r) / r^2 weighted by r^2 / exp(r) (exp's relative error)
    def exp_rest(v):
        return np.where(np.abs(v) < 1e-4, 0.5 + v / 6 + v * v / 24, (np.expm1(v) - v) / np.where(v == 0, 1, v * v))

    half = float(np.log(2) / 2) * 1.0002  # r's range and a little more: n's rounding
    x, x_err = minimax(exp_rest, -half, half, 4, weight=lambda v: v * v / np.exp(v))
    for name, c, err in (("erf P - 1", p, None), ("erf E", e, e_err), ("gelu R", r, r_err), ("gelu G", g, g_err),
                         ("exp X", x, x_err)):
        # P as fitted in double; the minimax fits as the float32s they are used as
        values = c if err is None else c.astype(np.float32)
        print(name, ", ".join(f"{v:.9e}f" for v in values), "" if err is None else f"(max error {err:.2e})")


ULP_C = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "cpu/vmath.h"
static double gelu_exact(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
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
#ifdef AVX512
#include "cpu/vmath_avx512.h"
/* vmath_avx512.c's loops take arrays: f(x) for one x through a one-element call (a masked tail) */
#define ONE(loop) static float loop##_one(float x) { float r; loop(&r, &x, 1); return r; }
ONE(mt_cpu_exp_f32_avx512) ONE(mt_cpu_log_f32_avx512)
#endif
int main(int argc, char **argv) {
    uint64_t step = (uint64_t)atoll(argv[1]);
#ifdef AVX512
    if (argc > 2) {
        CHECK("exp", mt_cpu_exp_f32_avx512_one, exp) CHECK("log", mt_cpu_log_f32_avx512_one, log)
        return 0;
    }
#endif
    CHECK("exp", mt_vexp_f32, exp) CHECK("tanh", mt_vtanh_f32, tanh)
    CHECK("log", mt_vlog_f32, log) CHECK("log1p", mt_vlog1p_f32, log1p) CHECK("erf", mt_verf_f32, erf)
    CHECK("gelu", mt_vgelu_f32, gelu_exact)
    return 0;
}
"""


def ulps(step):
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "ulp.c"), os.path.join(d, "ulp")
        with open(src, "w") as f:
            f.write(ULP_C)
        for arch in ("x86-64", "x86-64-v3"):  # the SIMD clones' baseline (no FMA) and AVX2 + FMA
            print(f"-march={arch}:", flush=True)
            subprocess.run(["cc", "-O2", "-std=c11", "-fno-trapping-math", f"-march={arch}", "-ffp-contract=fast",
                            "-I", os.path.join(ROOT, "csrc"), src, "-o", exe, "-lm"], check=True)
            subprocess.run([exe, str(step)], check=True)
        # cpu/vmath_avx512.c's exp and log, where this CPU has AVX-512 (F and DQ)
        with open("/proc/cpuinfo") as f:
            flags = set(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), []))
        if {"avx512f", "avx512dq"} <= flags:
            print("AVX-512 loops:", flush=True)
            subprocess.run(["cc", "-O2", "-std=c11", "-DAVX512", "-I", os.path.join(ROOT, "csrc"), src,
                            os.path.join(ROOT, "csrc", "cpu", "vmath_avx512.c"), "-o", exe, "-lm"], check=True)
            subprocess.run([exe, str(step), "avx512"], check=True)


if __name__ == "__main__":
    if "--ulps" in sys.argv:
        ulps(int(sys.argv[sys.argv.index("--ulps") + 1]))
    else:
        coefficients()
