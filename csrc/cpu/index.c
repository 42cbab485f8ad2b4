/* Gathering and scattering through index tensors on the CPU: index_select, gather, scatter,
 * scatter_add, scatter_reduce, embedding, and index / index_put_, the kernels of advanced
 * indexing (t[idx], t[idx] = v). The front ends and plans are ops/index_plan.c's, for every
 * device; this file is the CPU's backend to them: reading positions and the loops.
 *
 * Each kernel is one run of the shared iterator over three operands of one shape: a destination,
 * a source, and int64 positions. The tensor that is indexed is viewed with that shape and a
 * stride of 0 along the indexed dims; the position of each element, times the byte stride of
 * the indexed dim, is added to its address (PyTorch's index kernels work the same way). Indices
 * are checked against their dim before anything is written, so a bad index leaves the
 * destination untouched. Elements move as raw words of their width, so one loop serves every
 * dtype of a width (bool for width 1, normalised as it is read: loops.h; complex128 for width
 * 16); only the accumulating forms compute, per dtype (complex ones with core/math.h's complex
 * products). */
#include <string.h>

#include "cpu/copy.h"
#include "cpu/elementwise.h"
#include "cpu/iter.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/index_plan.h"

/* ---- the loops: data[0] destination, data[1] source, data[2] int64 positions ---- */

typedef struct move_ctx {
    int64_t step; /* bytes per unit of position */
} move_ctx;

// dst[i] = *(src_i + pos[i] * step): the source is indexed. One position for the whole run (a
// row of t[idx]) is a plain copy, a memcpy when both sides are contiguous (dst is a new tensor,
// so it cannot overlap src); a gather along the run reads one position per element.
#define TAKE_LOOP(name, T)                                                                        \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)                   \
    {                                                                                             \
        const int64_t step = ((const move_ctx *)ctx)->step;                                       \
        if (strides[2] == 0) {                                                                    \
            const char *src = data[1] + *(const int64_t *)data[2] * step;                         \
            if (strides[0] == sizeof(T) && strides[1] == sizeof(T)) {                             \
                if (_Generic((T)0, bool: false, default: true)) { /* a bool byte is normalised */ \
                    memcpy(data[0], src, (size_t)n * sizeof(T));                                  \
                    return;                                                                       \
                }                                                                                 \
                for (int64_t i = 0; i < n; i++) {                                                 \
                    MT_AT(T, 0, i) = MT_LOAD(T, src + i * sizeof(T));                             \
                }                                                                                 \
                return;                                                                           \
            }                                                                                     \
            for (int64_t i = 0; i < n; i++) {                                                     \
                MT_AT(T, 0, i) = MT_LOAD(T, src + i * strides[1]);                                \
            }                                                                                     \
            return;                                                                               \
        }                                                                                         \
        if (strides[0] == sizeof(T) && strides[1] == 0 && strides[2] == sizeof(int64_t)) {        \
            /* unrolled by 8: 0.66x the time of the rolled loop on rows of 512 floats */          \
            T *restrict o = (T *)data[0];                                                         \
            const int64_t *restrict pos = (const int64_t *)data[2];                               \
            _Pragma("GCC unroll 8") for (int64_t i = 0; i < n; i++)                               \
            {                                                                                     \
                o[i] = MT_LOAD(T, data[1] + pos[i] * step);                                       \
            }                                                                                     \
            return;                                                                               \
        }                                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                         \
            MT_AT(T, 0, i) = MT_LOAD(T, data[1] + i * strides[1] + MT_AT(int64_t, 2, i) * step);  \
        }                                                                                         \
    }
// *(dst_i + pos[i] * step) = src[i], or EXPR of the element p and v = src[i] when accumulating:
// the destination is indexed. One position for the whole run (a row of index_put_ or index_add_)
// is read once, and a contiguous run is a loop the compiler vectorises (values sharing dst's
// memory were copied before: ops/index_plan.c); a scatter along the run reads one position per
// element.
#define PUT_LOOP(name, T, EXPR)                                                            \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx)            \
    {                                                                                      \
        const int64_t step = ((const move_ctx *)ctx)->step;                                \
        if (strides[2] == 0 && strides[0] == sizeof(T) && strides[1] == sizeof(T)) {       \
            T *restrict o = (T *)(data[0] + *(const int64_t *)data[2] * step);             \
            const T *restrict x = (const T *)data[1];                                      \
            for (int64_t i = 0; i < n; i++) {                                              \
                T *p = o + i;                                                              \
                const T v = MT_LOAD(T, x + i);                                             \
                *p = (EXPR);                                                               \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        if (strides[0] == 0 && strides[1] == sizeof(T) && strides[2] == sizeof(int64_t)) { \
            const T *x = (const T *)data[1];                                               \
            const int64_t *pos = (const int64_t *)data[2];                                 \
            for (int64_t i = 0; i < n; i++) {                                              \
                T *p = (T *)(data[0] + pos[i] * step);                                     \
                const T v = MT_LOAD(T, x + i);                                             \
                *p = (EXPR);                                                               \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                  \
            T *p = (T *)(data[0] + i * strides[0] + MT_AT(int64_t, 2, i) * step);          \
            const T v = MT_GET(T, 1, i);                                                   \
            *p = (EXPR);                                                                   \
        }                                                                                  \
    }
TAKE_LOOP(take_w1, bool)
TAKE_LOOP(take_w4, uint32_t)
TAKE_LOOP(take_w8, uint64_t)
TAKE_LOOP(take_w16, double _Complex)
PUT_LOOP(put_w1, bool, v)
PUT_LOOP(put_w4, uint32_t, v)
PUT_LOOP(put_w8, uint64_t, v)
PUT_LOOP(put_w16, double _Complex, v)
/* indexed by the element's width: 1 -> 0, 4 -> 1, 8 -> 2, 16 -> 3 */
static const mt_loop_fn take_loops[4] = {take_w1, take_w4, take_w8, take_w16};
static const mt_loop_fn put_loops[4] = {put_w1, put_w4, put_w8, put_w16};
#define ADD_LOOP(E, T, S) PUT_LOOP(add_##S, T, (T)(MT_LOAD(T, p) + v))
MT_DTYPES(ADD_LOOP)
ADD_LOOP(MT_COMPLEX64, float _Complex, c64)
ADD_LOOP(MT_COMPLEX128, double _Complex, c128)
static const mt_loop_fn add_loops[MT_NUM_DTYPES] = {add_b8,
                                                    add_i32,
                                                    add_i64,
                                                    add_f32,
                                                    add_f64,
                                                    [MT_COMPLEX64] = add_c64,
                                                    [MT_COMPLEX128] = add_c128};
/* scatter's other reductions: a bool's product is its and */
#define MUL_LOOP(E, T, S) PUT_LOOP(mul_##S, T, (T)(MT_LOAD(T, p) * v))
#define MAX_LOOP(E, T, S) PUT_LOOP(max_##S, T, mt_maximum_##S(MT_LOAD(T, p), v))
#define MIN_LOOP(E, T, S) PUT_LOOP(min_##S, T, mt_minimum_##S(MT_LOAD(T, p), v))
PUT_LOOP(mul_b8, bool, MT_LOAD(bool, p) && v)
MUL_LOOP(MT_INT32, int32_t, i32)
MUL_LOOP(MT_INT64, int64_t, i64)
MUL_LOOP(MT_FLOAT32, float, f32)
MUL_LOOP(MT_FLOAT64, double, f64)
PUT_LOOP(mul_c64, float _Complex, mt_cmul_c64(MT_LOAD(float _Complex, p), v))
PUT_LOOP(mul_c128, double _Complex, mt_cmul_c128(MT_LOAD(double _Complex, p), v))
MT_DTYPES(MAX_LOOP)
MT_DTYPES(MIN_LOOP)
static const mt_loop_fn mul_loops[MT_NUM_DTYPES] = {mul_b8,
                                                    mul_i32,
                                                    mul_i64,
                                                    mul_f32,
                                                    mul_f64,
                                                    [MT_COMPLEX64] = mul_c64,
                                                    [MT_COMPLEX128] = mul_c128};
static const mt_loop_fn max_loops[MT_NUM_DTYPES] = {max_b8, max_i32, max_i64, max_f32, max_f64};
static const mt_loop_fn min_loops[MT_NUM_DTYPES] = {min_b8, min_i32, min_i64, min_f32, min_f64};

static mt_loop_fn
by_width(const mt_loop_fn *loops, mt_dtype dt)
{
    size_t w = mt_dtype_size(dt);
    return loops[w == 1 ? 0 : w == 4 ? 1 : w == 8 ? 2 : 3];
}

/* mt_iter_run with dim 0 split into blocks between threads, each block all of the outer dims
 * (index_add_ of whole rows: each thread its own columns of every row). Blocks start on
 * multiples of 16 elements, so that threads share no cache line of a contiguous dst. */
static void
run_in_blocks_of_dim0(const mt_iter *it, mt_loop_fn loop, void *ctx)
{
    const int64_t n0 = it->shape[0];
    int64_t numel = 1;
    for (int d = 0; d < it->ndim; d++) {
        numel *= it->shape[d];
    }
    const int64_t most = n0 / 16 > 0 ? n0 / 16 : 1; /* blocks of 16 elements at least */
    int parts = mt_parallel_parts(numel, 32768);
    parts = parts < most ? parts : (int)most;
    const int64_t block = (n0 / parts + 15) / 16 * 16;
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int p = 0; p < parts; p++) {
        mt_iter sub = *it;
        const int64_t lo = p * block < n0 ? p * block : n0;
        sub.shape[0] = (lo + block < n0 ? lo + block : n0) - lo;
        for (int k = 0; k < sub.nops; k++) {
            sub.data[k] += lo * sub.strides[0][k];
        }
        if (sub.shape[0] > 0) {
            mt_iter_run(&sub, loop, ctx);
        }
    }
}

/* One iterator run of loop over (dst, src, pos), each broadcast to shape, split between threads
 * where each thread writes elements of its own: always when taking (each element of dst is
 * written once); for a put into a dense tensor (apart), along a dim where dst steps (its indices
 * are then coordinates of the tensor other than the ones positions move along): the outermost,
 * else dim 0 in blocks. */
static mt_status
run(int ndim, const int64_t *shape, mt_tensor *dst, mt_tensor *src, mt_tensor *pos, mt_loop_fn loop,
    int64_t step, bool take, bool apart)
{
    mt_tensor *ops[3] = {dst, src, pos};
    mt_iter it;
    mt_status st = mt_iter_build(&it, ndim, shape, ops, 3);
    if (st) {
        return st;
    }
    move_ctx c = {step};
    const int outer = it.ndim - 1;
    if (take || (apart && outer >= 0 && it.strides[outer][0] != 0)) {
        mt_iter_run_parallel(&it, loop, &c);
    } else if (apart && outer > 0 && it.strides[0][0] != 0) {
        run_in_blocks_of_dim0(&it, loop, &c);
    } else {
        mt_iter_run(&it, loop, &c);
    }
    return MT_OK;
}

/* ---- shared checks ---- */

/* Whether a value of v (n) lies outside [0, size): its largest value seen unsigned, where a
 * negative one is larger than any size (a max the compiler vectorises, with no branch). */
MT_SIMD_CLONES static bool
any_outside(const int64_t *v, int64_t n, int64_t size)
{
    uint64_t top = 0;
    for (int64_t i = 0; i < n; i++) {
        top = (uint64_t)v[i] > top ? (uint64_t)v[i] : top;
    }
    return n > 0 && top >= (uint64_t)size;
}

/* The CPU's positions (ops/index_plan.h's mt_index_backend). */
static mt_status
positions(mt_tensor *index, int64_t size, const mt_tensor *written, mt_tensor **out, bool *bad,
          int64_t *bad_value)
{
    bool reuse = index->dtype == MT_INT64 && mt_tensor_is_contiguous(index) &&
                 (written == NULL || index->storage != written->storage);
    mt_status st = reuse ? (*out = mt_tensor_retain(index), MT_OK)
                         : mt_cpu_cast(index, MT_INT64, out);
    if (st) {
        return st;
    }
    const int64_t *v = (const int64_t *)mt_tensor_data(*out), n = mt_tensor_numel(*out);
    const int parts = mt_parallel_parts(n, 32768);
    bool outside = false;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(|| : outside)
    for (int p = 0; p < parts; p++) {
        const int64_t lo = n * p / parts;
        outside = outside || any_outside(v + lo, n * (p + 1) / parts - lo, size);
    }
    if (outside) { /* the first one, as PyTorch reports it */
        int64_t i = 0;
        while (v[i] >= 0 && v[i] < size) {
            i++;
        }
        *bad = true;
        *bad_value = v[i];
        mt_tensor_clear(out);
    }
    return MT_OK;
}

/* ---- advanced indexing: index, index_put_, index_select ---- */

typedef struct offset_ctx {
    int64_t size, step; /* of the indexed dim: its size, its stride in bytes */
    bool bad;
    int64_t bad_index;
} offset_ctx;

// pos (B), idx (broadcast to B); pos = wrap(idx) * step, or pos += it (ADD: the dims after the
// first), a negative index counting from the end; the first index outside [-size, size) stops
// the loop and is recorded. A contiguous run is converted by a loop the compiler vectorises,
// which checks it by an unsigned max of idx + size (in range: under 2 size); only a run that
// holds a bad index is walked again, to find it (a check and a branch an element, after a fill
// of pos with zeros, took index_select of 4096 from a vector twice PyTorch's time)
#define OFFSET_LOOP(name, T, ADD)                                                              \
    MT_SIMD_CLONES static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                                          \
        offset_ctx *c = ctx;                                                                   \
        const int64_t size = c->size, step = c->step;                                          \
        if (c->bad) {                                                                          \
            return;                                                                            \
        }                                                                                      \
        if (strides[0] == sizeof(int64_t) && strides[1] == sizeof(T)) {                        \
            int64_t *restrict pos = (int64_t *)data[0];                                        \
            const T *restrict idx = (const T *)data[1];                                        \
            uint64_t top = 0;                                                                  \
            for (int64_t i = 0; i < n; i++) {                                                  \
                const int64_t j = (int64_t)idx[i];                                             \
                const uint64_t u = (uint64_t)j + (uint64_t)size;                               \
                top = u > top ? u : top;                                                       \
                pos[i] = (ADD ? pos[i] : 0) + (j < 0 ? j + size : j) * step;                   \
            }                                                                                  \
            if (top < 2 * (uint64_t)size || n == 0) {                                          \
                return;                                                                        \
            }                                                                                  \
        }                                                                                      \
        for (int64_t i = 0; i < n; i++) { /* a strided run, or one holding a bad index */      \
            const int64_t j = (int64_t)MT_AT(T, 1, i);                                         \
            if (j < -size || j >= size) {                                                      \
                c->bad = true;                                                                 \
                c->bad_index = j;                                                              \
                return;                                                                        \
            }                                                                                  \
            MT_AT(int64_t, 0, i) = (ADD ? MT_AT(int64_t, 0, i) : 0) +                          \
                                   (j < 0 ? j + size : j) * step;                              \
        }                                                                                      \
    }
OFFSET_LOOP(offset_i32, int32_t, false)
OFFSET_LOOP(offset_i64, int64_t, false)
OFFSET_LOOP(add_offset_i32, int32_t, true)
OFFSET_LOOP(add_offset_i64, int64_t, true)

/* The CPU's mt_index_offsets_fn (ops/index_plan.h). */
static mt_status
offsets(mt_tensor *self, mt_tensor *const *idx, int nb, const int64_t *b, mt_tensor **out)
{
    mt_status st = mt_tensor_empty(nb, b, MT_INT64, mt_tensor_device(self), out);
    if (st) {
        return st;
    }
    int64_t width = (int64_t)mt_dtype_size(self->dtype);
    bool first = true; /* the first indexed dim sets every position, the others add to it */
    for (int d = 0; d < self->ndim && st == MT_OK; d++) {
        if (idx[d] == NULL) {
            continue;
        }
        offset_ctx c = {self->sizes[d], self->strides[d] * width, false, 0};
        mt_tensor *ops[2] = {*out, idx[d]};
        mt_iter it;
        if ((st = mt_iter_build(&it, nb, b, ops, 2))) {
            break;
        }
        const bool i32 = idx[d]->dtype == MT_INT32;
        mt_iter_run(&it,
                    first ? (i32 ? offset_i32 : offset_i64)
                    : i32 ? add_offset_i32
                          : add_offset_i64,
                    &c);
        first = false;
        if (c.bad) {
            st = mt_fail_index_bounds(c.bad_index, d, c.size, MT_EINDEX);
        }
    }
    if (first && st == MT_OK) { /* no dim indexed: every position is 0 */
        mt_cpu_fill(*out, mt_scalar_int(0));
    }
    if (st) {
        mt_tensor_clear(out);
    }
    return st;
}

static mt_status
run_mode(int ndim, const int64_t *shape, mt_tensor *dst, mt_tensor *src, mt_tensor *pos,
         mt_index_mode mode, int64_t step, bool apart)
{
    static const mt_loop_fn *const reducing[] = {
        [MT_INDEX_ADD] = add_loops,
        [MT_INDEX_MUL] = mul_loops,
        [MT_INDEX_MAX] = max_loops,
        [MT_INDEX_MIN] = min_loops,
    };
    mt_loop_fn loop = mode == MT_INDEX_TAKE  ? by_width(take_loops, dst->dtype)
                      : mode == MT_INDEX_PUT ? by_width(put_loops, dst->dtype)
                                             : reducing[mode][dst->dtype];
    return run(ndim, shape, dst, src, pos, loop, step, mode == MT_INDEX_TAKE, apart);
}

static const mt_index_backend cpu = {positions, mt_cpu_cast, run_mode, offsets};

/* mt_cpu_<op> for each op of the family (ops/index_plan.h's list) */
#define CPU_INDEX_KERNEL(op, call)         \
    mt_status mt_cpu_##op(mt_args *a)      \
    {                                      \
        const mt_index_backend *be = &cpu; \
        return call;                       \
    }
MT_INDEX_OPS(CPU_INDEX_KERNEL)
#undef CPU_INDEX_KERNEL
