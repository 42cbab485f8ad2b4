/* record_shapes: an Op event's tensor inputs, written as PyTorch's profiler lists them.
 *
 * Only the tensor slots of mt_args are listed (an absent optional tensor is []), then a Tensor[]
 * argument's tensors; scalars and ints are left out. Runs only while recording with shapes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "profiler/trace.h"

typedef struct text {
    char *buf;
    size_t cap, len;
    bool full; /* a truncated list ends in "..." and is shown as text */
} text;

static void
put(text *t, const char *fmt, ...)
{
    if (t->full) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= t->cap - t->len - 4) {
        t->buf[t->len] = '\0';
        if (t->cap - t->len >= 4) {
            memcpy(t->buf + t->len, "...", 4);
        }
        t->full = true;
        return;
    }
    t->len += (size_t)n;
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
        put(shapes, d ? ", %lld" : "%lld", (long long)x->sizes[d]);
    }
    put(shapes, "]");
    put(dtypes, "'%s'", mt_dtype_c_name(x->dtype));
}

void
mt_trace_format_inputs(const struct mt_args *a, char *shapes_buf, size_t nshapes, char *dtypes_buf,
                       size_t ndtypes)
{
    text shapes = {shapes_buf, nshapes, 0, false};
    text dtypes = {dtypes_buf, ndtypes, 0, false};
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
