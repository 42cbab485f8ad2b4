/* The LAPACK kernels of torch.linalg.ldl_factor and ldl_solve: the Bunch-Kaufman L D L^T factors
 * of a symmetric matrix (sytrf) as LAPACK leaves them, and their solve (sytrs). Same layout rules
 * as cpu/linalg.c: batches of row-major matrices copied to column-major scratch and back. */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/lapack.h"
#include "dispatch/kernels.h"
#include "ops/linalg.h"
#include "ops/ops.h"

// A (*, n, n) symmetric (its lower triangle read); LD (*, n, n): L's multipliers below the
// diagonal (unit diagonal implied), D's 1x1 and 2x2 blocks on and next to it, zeros above;
// pivots (*, n) int32, LAPACK's: p > 0 row p was swapped in for a 1x1 block, p = pivots[i + 1]
// < 0 for the 2x2 block at i, i + 1; info (*) int32: i where D[i][i] (1-based) is exactly zero
mt_status
mt_cpu_linalg_ldl_factor_ex(mt_args *a)
{
    mt_tensor *A = a->t[0], *work = NULL;
    mt_lapack_batch b = {0};
    mt_status st = mt_lapack_batch_of(A, &b);
    const int n = (int)b.n, ld = n > 1 ? n : 1;
    const mt_dtype dt = A->dtype;
    const char lower = 'L';
    if (st || (st = mt_lapack_scratch((int64_t)n * n * (int64_t)b.es + 1, &work))) {
        goto out_release;
    }
    char *buf = mt_tensor_data(work);
    int *info = (int *)mt_tensor_data(a->out[2]);
    for (int64_t i = 0; i < b.count && st == MT_OK; i++) {
        int *piv = (int *)mt_tensor_data(a->out[1]) + i * n;
        char *out = mt_tensor_data(a->out[0]) + i * n * n * (int64_t)b.es;
        mt_lapack_to_cols(mt_lapack_matrix(&b, i), buf, n, n, n, b.es);
        info[i] = 0;
        if (n > 0) {
            WITH_WORK(LAPACK_STR, dt, st, &info[i], sytrf, &lower, &n, (void *)buf, &ld, piv);
        }
        for (int64_t r = 0; r < n; r++) { /* the lower triangle; LAPACK leaves the upper as A's */
            for (int64_t c = 0; c < n; c++) {
                mt_lapack_set(dt, out, r * n + c, c <= r ? mt_lapack_get(dt, buf, r + c * n) : 0.0);
            }
        }
    }
    if (st == MT_OK && a->b[1]) {
        st = mt_linalg_check_info(a->out[2], "torch.linalg.ldl_factor_ex", A->ndim > 2);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&b.x);
    return st;
}

/* sytrs reads the pivots unchecked: each must name a row (|p| in 1..n), and a 2x2 block's pair
 * (p < 0) must be whole, as sytrf writes it (pivots[i] == pivots[i + 1] < 0). */
static mt_status
check_ldl_pivots(const int32_t *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t v = p[i] < 0 ? -(int64_t)p[i] : p[i];
        if (v < 1 || v > n || (p[i] < 0 && (i + 1 >= n || p[i + 1] != p[i]))) {
            return mt_fail(MT_ERUNTIME,
                           "torch.linalg.ldl_solve: pivots[%lld] = %d is not a pivot of "
                           "ldl_factor for a matrix of size %lld",
                           (long long)i, (int)p[i], (long long)n);
        }
        i += p[i] < 0; /* the block's second row */
    }
    return MT_OK;
}

// LD (*, n, n) and pivots (*, n) of ldl_factor, B (*, n, c), batches broadcast; out X (*, n, c):
// A X = B for A = L D L^T (sytrs)
mt_status
mt_cpu_linalg_ldl_solve(mt_args *a)
{
    mt_tensor *LD = a->t[0], *B = a->t[2], *LDd = NULL, *Bd = NULL, *Pd = NULL, *work = NULL;
    mt_linalg_system sys;
    const mt_dtype dt = LD->dtype;
    const size_t es = mt_dtype_size(dt);
    const char lower = 'L';
    mt_status st = mt_linalg_ldl_solve_spec(LD, a->t[1], B, &sys);
    if (st || (st = mt_cpu_dense(LD, dt, &LDd)) || (st = mt_cpu_dense(B, dt, &Bd)) ||
        (st = mt_cpu_dense(a->t[1], MT_INT32, &Pd))) {
        goto out_release;
    }
    const int64_t n = LD->sizes[LD->ndim - 1], c = sys.out[sys.nout - 1];
    const int64_t count = mt_numel(sys.nb, sys.batch);
    if ((st = mt_lapack_check_fits(n, c)) ||
        (st = mt_lapack_scratch((n * n + n * c) * (int64_t)es + 1, &work))) {
        goto out_release;
    }
    char *ldc = mt_tensor_data(work), *rhs = ldc + (size_t)(n * n) * es;
    const int in = (int)n, ldn = n > 1 ? (int)n : 1, nrhs = (int)c;
    for (int64_t k = 0; k < count && st == MT_OK; k++) {
        const int64_t off = mt_linalg_batch_offset(&sys, LD, 2, k);
        const int32_t *pk = (const int32_t *)mt_tensor_data(Pd) + (n > 0 ? off / n : 0);
        const char *bk = mt_tensor_data(Bd) + mt_linalg_batch_offset(&sys, B, 2, k) * (int64_t)es;
        if ((st = check_ldl_pivots(pk, n))) {
            break;
        }
        mt_lapack_to_cols(bk, rhs, n, c, n, es);
        if (n > 0 && nrhs > 0) {
            int info = 0;
            mt_lapack_to_cols(mt_tensor_data(LDd) + off * (int64_t)es, ldc, n, n, n, es);
            LAPACK_STR(dt, sytrs, &lower, &in, &nrhs, (void *)ldc, &ldn, (const int *)pk,
                       (void *)rhs, &ldn, &info);
        }
        mt_lapack_from_cols(rhs, mt_tensor_data(a->out[0]) + k * n * c * (int64_t)es, n, c, n, es);
    }
out_release:
    mt_tensor_clear(&work);
    mt_tensor_clear(&LDd);
    mt_tensor_clear(&Bd);
    mt_tensor_clear(&Pd);
    return st;
}
