/* record_shapes: an Op event's tensor inputs, written as PyTorch's profiler lists them.
 *
 * Only the tensor slots of mt_args are listed (an absent optional tensor is []), then a Tensor[]
 * argument's tensors; scalars and ints are left out. Runs only while recording with shapes. */
#include <stdbool.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "profiler/trace.h"

/* Written by hand, not with snprintf: this runs for every op while recording shapes, and
 * vsnprintf's parsing was most of that recording's cost. */
typedef struct text {
    char *buf;
    size_t cap, len;
    bool full; /* a truncated list ends in "..." and is shown as text */
} text;

static void
put_n(text *t, const char *s, size_t n)
{
    if (t->full) {
        return;
    }
    if (n + 4 >= t->cap - t->len) { /* room for "..." and the NUL is kept */
        memcpy(t->buf + t->len, "...", 4);
        t->full = true;
        return;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void
put(text *t, const char *s)
{
    put_n(t, s, strlen(s));
}

static void
put_int(text *t, long long v)
{
    char digits[24];
    int n = sizeof(digits);
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        digits[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) {
        digits[--n] = '-';
    }
    put_n(t, digits + n, sizeof(digits) - (size_t)n);
}

static void
put_tensor(text *shapes, text *dtypes, const mt_tensor *x, bool first)
{
    put(shapes, first ? "[" : ", [");
    put(dtypes, first ? "" : ", ");
    if (x == NULL) {
        put(shapes, "]");
        put(dtypes, "''");
        return;
    }
    for (int d = 0; d < x->ndim; d++) {
        if (d) {
            put(shapes, ", ");
        }
        put_int(shapes, (long long)x->sizes[d]);
    }
    put(shapes, "]");
    put(dtypes, "'");
    put(dtypes, mt_dtype_c_name(x->dtype));
    put(dtypes, "'");
}

void
mt_trace_format_inputs(const struct mt_args *a, char *shapes_buf, size_t nshapes, char *dtypes_buf,
                       size_t ndtypes)
{
    text shapes = {shapes_buf, nshapes, 0, false};
    text dtypes = {dtypes_buf, ndtypes, 0, false};
    shapes_buf[0] = dtypes_buf[0] = '\0';
    int last = MT_MAX_TENSOR_ARGS - 1;
    while (last >= 0 && a->t[last] == NULL) {
        last--;
    }
    put(&shapes, "[");
    put(&dtypes, "[");
    bool first = true;
    for (int k = 0; k <= last; k++, first = false) {
        put_tensor(&shapes, &dtypes, a->t[k], first);
    }
    for (int k = 0; k < a->ntl; k++, first = false) {
        put_tensor(&shapes, &dtypes, a->tl[k], first);
    }
    put(&shapes, "]");
    put(&dtypes, "]");
}

/* conv2d's stride, padding and dilation lists and its groups: "[[2, 2], [1, 1], [1, 1], 2]" (its
 * schema's int slots l[0..2] and i[0]); the other ops PyTorch counts (mm, addmm, bmm, baddbmm,
 * mul, add) need only their shapes. */
void
mt_trace_format_flop_args(const char *op, const struct mt_args *a, char *buf, size_t n)
{
    text t = {buf, n, 0, false};
    buf[0] = '\0';
    if (strcmp(op, "conv2d") != 0) {
        return;
    }
    put(&t, "[");
    for (int k = 0; k < 3; k++) {
        const mt_intlist *l = &a->l[k];
        const int64_t *v = mt_intlist_values(l);
        put(&t, "[");
        for (int d = 0; d < l->n; d++) {
            if (d) {
                put(&t, ", ");
            }
            put_int(&t, (long long)v[d]);
        }
        put(&t, "], ");
    }
    put_int(&t, (long long)a->i[0]);
    put(&t, "]");
}
