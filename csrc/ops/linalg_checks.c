/* The linear algebra ops' checks (ops/linalg.h), shared by their front ends (ops/linalg_fronts.c),
 * the kernels and the composites: PyTorch's messages for matrices of the wrong rank, shape or
 * dtype, systems whose sides do not fit, and the LinAlgError of a matrix LAPACK could not take. */
#include <stdio.h>
#include <string.h>

#include "dispatch/complex.h"
#include "ops/fails.h"
#include "ops/front.h"
#include "ops/linalg.h"
#include "ops/ops.h"

/* LAPACK takes float and double only: PyTorch's error for float16/bfloat16 names the kernel
 * that refused them, or says "Low precision dtypes" (inv, slogdet). */
static mt_status
lapack_dtype(mt_dtype dt, const char *api)
{
    static const char kernels[][2][32] = {
        {"linalg.cholesky", "cholesky_cpu"},
        {"linalg.qr", "geqrf_cpu"},
        {"linalg.svd", "linalg_svd_cpu"},
        {"linalg.eigh", "linalg_eigh_cpu"},
        {"linalg.solve", "lu_cpu"},
        {"linalg.det", "lu_cpu"},
        {"linalg.lu_factor", "lu_cpu"},
        {"linalg.solve_triangular", "triangular_solve_cpu"},
        {"torch.geqrf", "geqrf_cpu"},
        {"torch.linalg.ldl_factor_ex", "ldl_factor_kernel_cpu"},
    };
    if (!mt_dtype_is_small(dt)) {
        return MT_OK;
    }
    const size_t n = strlen(api) + 1;
    for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
        if (n <= sizeof(kernels[k][0]) && memcmp(api, kernels[k][0], n) == 0) {
            return mt_fail_not_implemented(kernels[k][1], "", dt);
        }
    }
    return mt_fail(MT_ERUNTIME, "%s: Low precision dtypes not supported. Got %s", api,
                   mt_dtype_scalar_name(dt));
}

mt_status
mt_linalg_check_matrix(const mt_tensor *A, const char *api, const char *name, bool square)
{
    mt_status st;
    if (A->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor %s must have at least 2 dimensions.", api,
                       name);
    }
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    if (square && m != n) {
        return mt_fail(MT_ERUNTIME,
                       "%s: %s must be batches of square matrices, but they are %lld by %lld "
                       "matrices",
                       api, name, (long long)m, (long long)n);
    }
    st = mt_linalg_check_float(A, api);
    return st ? st : lapack_dtype(A->dtype, api);
}

mt_status
mt_linalg_check_float(const mt_tensor *A, const char *api)
{
    /* complex tensors reach only the ops that take them (the dispatcher refuses the others) */
    if (!mt_dtype_is_float(A->dtype) && !mt_dtype_is_complex(A->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "%s: Expected a floating point or complex tensor as input. Got %s", api,
                       mt_dtype_scalar_name(A->dtype));
    }
    return MT_OK;
}

mt_status
mt_linalg_check_norm_dtype(mt_dtype self_dt, int dtype)
{
    const char *api = "linalg.vector_norm";
    if (dtype < 0) {
        return MT_OK;
    }
    mt_dtype dt = (mt_dtype)dtype;
    bool is_cx = mt_dtype_is_complex(self_dt);
    if (!mt_dtype_is_float(dt) && !mt_dtype_is_complex(dt)) {
        return mt_fail(MT_ERUNTIME, "%s: dtype should be floating point or complex, but got %s",
                       api, mt_dtype_scalar_name(dt));
    }
    if (mt_dtype_is_complex(dt) != is_cx) {
        return mt_fail(MT_ERUNTIME, "%s: dtype should be %s for %s inputs, but got %s", api,
                       is_cx ? "complex" : "real", is_cx ? "complex" : "real",
                       mt_dtype_scalar_name(dt));
    }
    if (mt_promote_types(self_dt, dt) != dt) {
        return mt_fail(MT_ERUNTIME,
                       "%s: the dtype of the input (%s) should be convertible without narrowing to "
                       "the specified dtype (%s)",
                       api, mt_dtype_scalar_name(self_dt), mt_dtype_scalar_name(dt));
    }
    return MT_OK;
}

/* sys's batch: A's batch dims (adims of them) broadcast with B's (bdims). */
static mt_status
broadcast_batch(const mt_tensor *A, int adims, const mt_tensor *B, int bdims, mt_linalg_system *sys)
{
    return mt_broadcast_shapes(A->ndim - adims, A->sizes, B->ndim - bdims, B->sizes, &sys->nb,
                               sys->batch);
}

/* out = batch + the matrix (rows, cols), or the vector (rows) */
static void
system_out(mt_linalg_system *sys, int64_t rows, int64_t cols)
{
    memcpy(sys->out, sys->batch, sizeof(int64_t) * (size_t)sys->nb);
    sys->nout = sys->nb;
    sys->out[sys->nout++] = rows;
    if (!sys->vector) {
        sys->out[sys->nout++] = cols;
    }
}

/* B is a vector (a column) when it is 1-D or shaped as A without its last dim: PyTorch's
 * linalg_solve_is_vector_rhs */
static bool
is_vector_rhs(const mt_tensor *A, const mt_tensor *B)
{
    if (B->ndim == 1) {
        return true;
    }
    bool vector = B->ndim == A->ndim - 1;
    for (int d = 0; vector && d < B->ndim; d++) {
        vector = B->sizes[d] == A->sizes[d];
    }
    return vector;
}

static mt_status
same_dtype(const char *api, const mt_tensor *A, const mt_tensor *B)
{
    if (A->dtype != B->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "%s: Expected A and B to have the same dtype, but found A of type %s and "
                       "B of type %s instead",
                       api, mt_dtype_scalar_name(A->dtype), mt_dtype_scalar_name(B->dtype));
    }
    return MT_OK;
}

/* PyTorch's message when B's rows (or columns, for X A = B) do not match A's order n. */
static mt_status
incompatible(const char *api, bool left, int64_t n, int64_t brows, int64_t bcols)
{
    return mt_fail(MT_ERUNTIME,
                   "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and "
                   "%lldx%lld)",
                   api, left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)brows,
                   (long long)bcols);
}

mt_status
mt_linalg_solve_spec(const mt_tensor *A, const mt_tensor *B, bool left, mt_linalg_system *sys)
{
    const char *api = "linalg.solve";
    mt_status st = mt_linalg_check_matrix(A, api, "A", true);
    if (st || (st = same_dtype(api, A, B))) {
        return st;
    }
    const bool vector = is_vector_rhs(A, B);
    if (!vector && B->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor B must have at least 2 dimensions.", api);
    }
    const int64_t n = A->sizes[A->ndim - 1];
    int64_t brows = vector ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2];
    int64_t bcols = vector ? 1 : B->sizes[B->ndim - 1];
    if (left ? brows != n : bcols != n) {
        return incompatible(api, left, n, brows, bcols);
    }
    sys->vector = vector;
    if ((st = broadcast_batch(A, 2, B, vector ? 1 : 2, sys))) {
        return st;
    }
    system_out(sys, brows, bcols);
    return MT_OK;
}

mt_status
mt_linalg_triangular_spec(const mt_tensor *A, const mt_tensor *B, bool left, mt_linalg_system *sys)
{
    const char *api = "linalg.solve_triangular";
    if (B->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor B must have at least 2 dimensions.", api);
    }
    mt_status st = mt_linalg_check_matrix(A, api, "A", true);
    if (st) {
        return st;
    }
    if (A->dtype != B->dtype) {
        return same_dtype(api, A, B);
    }
    const int64_t n = A->sizes[A->ndim - 1];
    const int64_t brows = B->sizes[B->ndim - 2], bcols = B->sizes[B->ndim - 1];
    if (left ? brows != n : bcols != n) {
        return incompatible(api, left, n, brows, bcols);
    }
    sys->vector = false;
    if ((st = broadcast_batch(A, 2, B, 2, sys))) {
        return st;
    }
    system_out(sys, brows, bcols);
    return MT_OK;
}

mt_status
mt_linalg_lu_solve_spec(const mt_tensor *LU, const mt_tensor *pivots, const mt_tensor *B, bool left,
                        mt_linalg_system *sys)
{
    const char *api = "linalg.lu_solve";
    mt_status st = mt_linalg_check_float(LU, "torch.linalg.lu_solve");
    if (st) {
        return st;
    }
    if (LU->dtype != B->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "%s: Expected LU and B to have the same dtype, but found LU of type %s and "
                       "B of type %s instead",
                       api, mt_dtype_scalar_name(LU->dtype), mt_dtype_scalar_name(B->dtype));
    }
    if (pivots->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME, "%s: pivots should be a Tensor of scalar type torch.int32",
                       api);
    }
    if ((st = mt_linalg_check_matrix(LU, "torch.linalg.lu_solve", "A", true))) {
        return st;
    }
    if (B->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor B must have at least 2 dimensions.", api);
    }
    const int64_t n = LU->sizes[LU->ndim - 1];
    const int64_t brows = B->sizes[B->ndim - 2], bcols = B->sizes[B->ndim - 1];
    if (left ? brows != n : bcols != n) {
        return incompatible(api, left, n, brows, bcols);
    }
    if (pivots->ndim < 1 || pivots->sizes[pivots->ndim - 1] != n) {
        return mt_fail(MT_ERUNTIME,
                       "%s: Number of pivots per batch should be same as the dimension of the "
                       "matrix",
                       api);
    }
    bool same = pivots->ndim == LU->ndim - 1;
    for (int d = 0; same && d < pivots->ndim; d++) {
        same = pivots->sizes[d] == LU->sizes[d];
    }
    if (!same) {
        char shape[256];
        mt_format_sizes(shape, sizeof(shape), pivots->ndim, pivots->sizes);
        return mt_fail(MT_ERUNTIME,
                       "%s: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
                       "pivots with shape %s instead",
                       api, shape);
    }
    sys->vector = false;
    if ((st = broadcast_batch(LU, 2, B, 2, sys))) {
        return st;
    }
    system_out(sys, brows, bcols);
    return MT_OK;
}

mt_status
mt_linalg_lstsq_spec(const mt_tensor *A, const mt_tensor *B, const char *driver_arg,
                     mt_linalg_system *sys, const char **driver)
{
    const char *api = "torch.linalg.lstsq";
    if (A->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: input must have at least 2 dimensions.", api);
    }
    if (B->ndim < 1) {
        return mt_fail(MT_ERUNTIME, "%s: other must have at least 1 dimension.", api);
    }
    if (A->dtype != B->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "%s: Expected input and other to have the same dtype, but got input's "
                       "dtype %s and other's dtype %s",
                       api, mt_dtype_scalar_name(A->dtype), mt_dtype_scalar_name(B->dtype));
    }
    if (!mt_dtype_is_float(A->dtype) || mt_dtype_is_small(A->dtype)) {
        return mt_fail(MT_ERUNTIME,
                       "This function doesn't handle types other than float and double");
    }
    const int dim_diff = A->ndim - B->ndim;
    if (dim_diff < 0 || dim_diff > 1) {
        return mt_fail(MT_ERUNTIME,
                       "%s: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                       "other.dim()) <= 1",
                       api);
    }
    sys->vector = dim_diff == 1; /* other as a column, whatever its batch dims */
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    if (B->sizes[B->ndim - (sys->vector ? 1 : 2)] != m) {
        return mt_fail(MT_ERUNTIME, "%s: input.size(-2) should match other.size(-%d)", api,
                       sys->vector ? 1 : 2);
    }
    static const char *const drivers[] = {"gelsy", "gels", "gelsd", "gelss"};
    *driver = NULL;
    for (int k = 0; k < 4; k++) {
        if (driver_arg == NULL ? k == 0 : strcmp(driver_arg, drivers[k]) == 0) {
            *driver = drivers[k];
            break;
        }
    }
    if (*driver == NULL) {
        return mt_fail(MT_ERUNTIME,
                       "%s: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)", api);
    }
    mt_status st = broadcast_batch(A, 2, B, sys->vector ? 1 : 2, sys);
    if (st == MT_OK) {
        system_out(sys, n, sys->vector ? 1 : B->sizes[B->ndim - 1]);
    }
    return st;
}

int64_t
mt_linalg_batch_offset(const mt_linalg_system *sys, const mt_tensor *t, int mdims, int64_t index)
{
    /* walk sys's batch from its last dim; t's batch dims align to the right, size 1 repeats */
    int64_t offset = 0, step = 1;
    for (int d = t->ndim - mdims; d < t->ndim; d++) {
        step *= t->sizes[d];
    }
    const int tb = t->ndim - mdims;
    for (int d = sys->nb - 1; d >= 0; d--) {
        int64_t i = index % sys->batch[d];
        index /= sys->batch[d];
        int td = d - (sys->nb - tb);
        if (td >= 0) {
            offset += (t->sizes[td] == 1 ? 0 : i) * step;
            step *= t->sizes[td];
        }
    }
    return offset;
}

mt_status
mt_linalg_fail_info(const char *api, int64_t info, int64_t index, bool batched)
{
    char where[64] = "";
    if (batched) {
        snprintf(where, sizeof(where), ": (Batch element %lld)", (long long)index);
    }
    const long long i = (long long)info;
    if (strstr(api, "lu_factor")) {
        return mt_fail(MT_ERUNTIME,
                       "%s%s: U[%lld,%lld] is zero and using it on lu_solve would result in a "
                       "division by zero. If you still want to perform the factorization, "
                       "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
                       api, where, i, i);
    }
    if (strstr(api, "ldl")) { /* sytrf's info: D[i, i] (1-based) is exactly zero */
        return mt_fail(MT_ERUNTIME,
                       "%s%s: The factorization could not be completed because the input is "
                       "singular (the diagonal block D[%lld,%lld] is zero).",
                       api, where, i, i);
    }
    if (strstr(api, "inv")) {
        return mt_fail(MT_ELINALG,
                       "%s%s: The diagonal element %lld is zero, the inversion could not be "
                       "completed because the input matrix is singular.",
                       api, where, i);
    }
    if (strstr(api, "solve")) {
        return mt_fail(MT_ELINALG, "%s%s: The solver failed because the input matrix is singular.",
                       api, where);
    }
    if (strstr(api, "cholesky")) {
        return mt_fail(MT_ELINALG,
                       "%s%s: The factorization could not be completed because the input is not "
                       "positive-definite (the leading minor of order %lld is not "
                       "positive-definite).",
                       api, where, i);
    }
    if (strstr(api, "svd")) {
        return mt_fail(MT_ELINALG,
                       "%s%s: The algorithm failed to converge because the input matrix is "
                       "ill-conditioned or has too many repeated singular values (error code: "
                       "%lld).",
                       api, where, i);
    }
    if (strstr(api, "eig")) {
        return mt_fail(MT_ELINALG,
                       "%s%s: The algorithm failed to converge because the input matrix is "
                       "ill-conditioned or has too many repeated eigenvalues (error code: %lld).",
                       api, where, i);
    }
    return mt_fail(MT_ELINALG,
                   "%s%s: The least squares solution could not be computed because the input "
                   "matrix does not have full rank (error code: %lld).",
                   api, where, i);
}

mt_status
mt_linalg_check_info(mt_tensor *info, const char *api, bool batched)
{
    /* info is a fresh contiguous tensor of a kernel's: read on the host (a CUDA tensor's through
     * a copy: the host round trip of dispatch/host_fallback.c computes these on CUDA tensors) */
    if (mt_tensor_device(info).type == MT_META) {
        return MT_OK; /* no values to check: PyTorch's meta device does not check them either */
    }
    mt_tensor *host = NULL;
    mt_status st = mt_tensor_device(info).type == MT_CPU
                       ? (host = mt_tensor_retain(info), MT_OK)
                       : mt_op__to_copy(info, MT_INT32, MT_DEVICE_CPU, &host);
    const int32_t *v = st ? NULL : (const int32_t *)mt_tensor_data(host);
    const int64_t count = mt_tensor_numel(info);
    for (int64_t k = 0; st == MT_OK && k < count; k++) {
        if (v[k] != 0) {
            st = mt_linalg_fail_info(api, v[k], k, batched);
        }
    }
    mt_tensor_clear(&host);
    return st;
}

/* pivots (*, n) int32 with A's batch dims: PyTorch's check for lu_solve and ldl_solve */
static mt_status
same_pivot_batch(const char *api, const char *name, const mt_tensor *A, const mt_tensor *pivots)
{
    bool same = pivots->ndim == A->ndim - 1;
    for (int d = 0; same && d < pivots->ndim; d++) {
        same = pivots->sizes[d] == A->sizes[d];
    }
    if (same) {
        return MT_OK;
    }
    char shape[256];
    mt_format_sizes(shape, sizeof(shape), pivots->ndim, pivots->sizes);
    return mt_fail(MT_ERUNTIME,
                   "%s: Expected %s.shape[:-1] and pivots.shape to be the same, but got pivots "
                   "with shape %s instead",
                   api, name, shape);
}

mt_status
mt_linalg_ldl_solve_spec(const mt_tensor *LD, const mt_tensor *pivots, const mt_tensor *B,
                         mt_linalg_system *sys)
{
    const char *api = "torch.linalg.ldl_solve";
    mt_status st = mt_linalg_check_matrix(LD, api, "A", true);
    if (st) {
        return st;
    }
    if (B->ndim == 0) { /* PyTorch reads B.size(-2) before checking B */
        return mt_fail(MT_EINDEX, "Dimension specified as -2 but tensor has no dimensions");
    }
    if (B->ndim < 2) {
        return mt_fail(MT_EINDEX,
                       "Dimension out of range (expected to be in range of [-1, 0], but got -2)");
    }
    if ((st = same_pivot_batch(api, "LD", LD, pivots))) {
        return st;
    }
    if (pivots->dtype != MT_INT32) {
        return mt_fail(MT_ERUNTIME, "%s: Expected pivots to be integers. Got %s", api,
                       mt_dtype_scalar_name(pivots->dtype));
    }
    if (LD->dtype != B->dtype) {
        return mt_fail(MT_ERUNTIME,
                       "Expected b and A to have the same dtype, but found b of type %s and A of "
                       "type %s instead.",
                       mt_dtype_scalar_name(B->dtype), mt_dtype_scalar_name(LD->dtype));
    }
    const int64_t n = LD->sizes[LD->ndim - 1], brows = B->sizes[B->ndim - 2];
    if (brows != n) {
        return mt_fail(MT_ERUNTIME,
                       "Incompatible matrix sizes for %s: each A matrix is %lld by %lld but each b "
                       "matrix is %lld by %lld",
                       api, (long long)n, (long long)n, (long long)brows,
                       (long long)B->sizes[B->ndim - 1]);
    }
    sys->vector = false;
    if ((st = broadcast_batch(LD, 2, B, 2, sys))) {
        return st;
    }
    system_out(sys, n, B->sizes[B->ndim - 1]);
    return MT_OK;
}

mt_status
mt_linalg_check_eig(const mt_tensor *A, mt_op op, const char *api)
{
    /* PyTorch picks the complex result dtype before any other check */
    if (!mt_dtype_is_float(A->dtype) && !mt_dtype_is_complex(A->dtype)) {
        return mt_fail(MT_ERUNTIME, "Unknown Complex ScalarType for %s",
                       mt_dtype_scalar_name(A->dtype));
    }
    if (A->ndim < 2) {
        return mt_fail(MT_ERUNTIME, "%s: The input tensor A must have at least 2 dimensions.", api);
    }
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    if (m != n) {
        return mt_fail(MT_ERUNTIME,
                       "%s: A must be batches of square matrices, but they are %lld by %lld "
                       "matrices",
                       api, (long long)m, (long long)n);
    }
    if (mt_dtype_is_small(A->dtype)) {
        return mt_fail_not_implemented("linalg_eig_out_cpu", "", A->dtype);
    }
    /* the results are complex, which the CUDA device cannot hold */
    return mt_tensor_device(A).type == MT_CUDA ? mt_complex_refuse_cuda(op) : MT_OK;
}

mt_status
mt_linalg_fail_eig_nonfinite(void)
{
    return mt_fail(MT_ERUNTIME, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
}

mt_status
mt_linalg_fail_eig_phase(void)
{
    return mt_fail(MT_ERUNTIME,
                   "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                   "multiplication by e^{i phi}. The specified loss function depends on this "
                   "quantity, so it is ill-defined.");
}
