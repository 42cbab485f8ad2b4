/* The argument rules of the factories that compute their values (arange, linspace, logspace,
 * eye) and of the shape kernels cat and one_hot, for the CPU and CUDA kernels alike. */
#ifndef MT_OPS_FACTORY_ARGS_H
#define MT_OPS_FACTORY_ARGS_H

#include "dispatch/dispatch.h"

/* arange's n values start + i * step (ints: in int64 from si, di; else in double from s, d), or
 * linspace's (logspace's: base ** point) n points from s to e. */
typedef struct mt_range_spec {
    mt_dtype dt;
    int64_t n;
    bool ints;
    int64_t si, di;
    double s, d, e, base;
} mt_range_spec;

/* device ("cpu", "cuda") names PyTorch's kernel in the bool error. */
mt_status mt_arange_spec(const mt_args *a, const char *device, mt_range_spec *r);
/* linspace and logspace (log); kernel: PyTorch's kernel name for the bool error. */
mt_status mt_spaced_spec(const mt_args *a, const char *kernel, mt_range_spec *r);
/* eye(n, m): the dtype and the sizes. */
mt_status mt_eye_spec(const mt_args *a, mt_dtype *dt, int64_t *n, int64_t *m);
/* A finished factory result to the caller, with requires_grad set (out released on error). */
mt_status mt_factory_finish(mt_args *a, mt_tensor *out);

/* cat's kernel for any device: each input copied into its slot of the result by copy_into
 * (dst = src cast to dst's dtype, on one device). */
mt_status mt_cat_with(mt_args *a, mt_status (*copy_into)(mt_tensor *dst, mt_tensor *src));
/* one_hot(self, num_classes): the checks before the values are seen; *classes the argument. */
mt_status mt_check_one_hot(const mt_tensor *self, const mt_args *a, int64_t *classes);
/* flip(self, dims): flip[d] for each dim in dims, no dim twice. */
mt_status mt_flip_dims(const mt_tensor *self, const mt_intlist *dims, bool *flip);
/* tril, triu (name) need 2 dims. */
mt_status mt_check_triangle(const mt_tensor *self, const char *name);

#endif
