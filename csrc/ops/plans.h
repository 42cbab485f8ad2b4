/* What a front end (ops/front.h) hands the backend kernels of its op: the plan it computed while
 * checking the arguments, so that no backend computes it again. One struct per family; the
 * dispatcher keeps one mt_plan for the call, with the op it is for (a front end shared by
 * several ops, tril and tril_, tells them apart by it), and the kernel reads its family's member
 * through a->plan. Plain values only (no tensor references): nothing to release. */
#ifndef MT_OPS_PLANS_H
#define MT_OPS_PLANS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pool_window.h"   /* pool_geom, plain C for the CUDA kernels too */
#include "core/grid_math.h"     /* mt_grid_geom, likewise */
#include "core/resample_math.h" /* mt_resample_plan, likewise */
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"

/* The reductions and the ops along one dim (cumsum, cumprod, softmax, log_softmax). */
typedef struct mt_reduce_plan {
    bool reduce[MT_MAX_DIMS]; /* the dims of self reduced */
    mt_dtype in_dt;           /* the dtype self is reduced in */
    mt_dtype out_dt;          /* the result's */
    double p;                 /* norm: the order p; var and std: the correction */
    int dim;                  /* the one dim (wrapped) of argmax, cumsum, softmax, ... */
} mt_reduce_plan;

/* The matrix products: beta and alpha (1 where not given) in the product's dtype's kind, as
 * PyTorch's integer products take them (0.5 becomes 0). */
typedef struct mt_product_plan {
    mt_scalar beta, alpha;
} mt_product_plan;

/* conv2d and its backward ops: the convolution's geometry. */
typedef struct conv_geom {
    int64_t n, c, h, w; /* input (N, C, H, W) */
    int64_t oc, kh, kw; /* weight (OC, C / groups, KH, KW) */
    int64_t oh, ow;     /* out (N, OC, OH, OW) */
    int64_t sh, sw, ph, pw, dh, dw, groups;
} conv_geom;

/* conv3d: the geometry of one depth slice (hw: its input channels c = 1 per slice, the
 * batch, output channels and groups as the whole convolution's), and the depth's. */
typedef struct conv3_geom {
    conv_geom hw;
    int64_t c, d, kd, od, sd, pd, dd; /* input channels, depth, kernel depth, output depth */
} conv3_geom;

/* layer_norm, batch_norm and their backward ops: the input seen as (rows, n), n the elements of
 * a normalized row (layer_norm), or as (outer, C, inner) (batch_norm); eps the argument. */
typedef struct mt_norm_plan {
    int64_t rows, n;
    int64_t outer, C, inner;
    double eps;
} mt_norm_plan;

/* The losses and embedding_dense_backward. */
typedef struct mt_loss_plan {
    int64_t N, C, K; /* nll_loss (and backward): self seen as (N, C, K), target (N, K) */
    mt_dtype dt;     /* binary_cross_entropy (with logits): the dtype it computes in, */
    int ndim;        /* and the shape of its per-element loss (its inputs broadcast together) */
    int64_t sizes[MT_MAX_DIMS];
    int64_t n, dim;  /* embedding_dense_backward: the number of indices, the embedding dim */
} mt_loss_plan;

/* The ops along one dim of self: gather, scatter, index_select (n: the index's length), sort,
 * argsort, topk (n: how many of each row the result keeps). */
typedef struct mt_along_plan {
    int dim; /* wrapped */
    int64_t n;
    int mode; /* scatter: its mt_index_mode (ops/index_plan.h); scatter_reduce: its reduction */
} mt_along_plan;

/* The shape ops that move elements. */
typedef struct mt_shape_plan {
    int ndim; /* cat, the gathering pads: the result's rank; masked_select: the broadcast one */
    int64_t sizes[MT_MAX_DIMS]; /* their sizes */
    int dim;                    /* cat: the dim joined along (wrapped) */
    mt_dtype dt;                /* cat: the promoted dtype */
    bool dims[MT_MAX_DIMS];     /* flip: the dims flipped */
    int64_t classes;            /* one_hot: num_classes as given (-1: from the values) */
    int npairs, pad_mode;       /* the gathering pads: the last npairs dims, an mt_pad_mode */
} mt_shape_plan;

/* The factories that compute their values: arange's n values start + i * step (ints: in int64
 * from si, di; else in double from s, d), or linspace's (logspace's: base ** point) n points
 * from s to e; eye's n x m; empty and randperm use dt (and randperm n). */
typedef struct mt_range_spec {
    mt_dtype dt;
    int64_t n, m;
    bool ints;
    int64_t si, di;
    double s, d, e, base;
} mt_range_spec;

/* The random distributions, ops/random.def's rows in order: the fills of scalar parameters
 * (mt_random_spec; uniform_(from, to), normal_(mean, std), log_normal_(mean, std) and
 * cauchy_(median, sigma) read a and b, bernoulli_(p), exponential_(lambd) and geometric_(p) a,
 * random_(from, to) from and span), then those with a parameter per element. */
typedef enum mt_random_kind {
#define MT_RANDOM(kind, op, sample, form, dtypes) MT_RANDOM_##kind,
#define MT_RANDOM_EACH(kind, op, sample, form, dtypes) MT_RANDOM_##kind,
#include "ops/random.def"
    MT_RANDOM_NUM_SAMPLERS
} mt_random_kind;

/* The number of fills of scalar parameters: the MT_RANDOM rows, which come first. */
enum {
#define MT_RANDOM(kind, op, sample, form, dtypes) MT_RANDOM_COUNT_##kind,
#include "ops/random.def"
    MT_RANDOM_NUM_KINDS
};

typedef struct mt_random_spec {
    double a, b;
    int64_t from;
    uint64_t span; /* 0 for all 2^64 values */
    mt_dtype dt;   /* self's dtype as given: float16 and bfloat16 fill through float32 buffers */
} mt_random_spec;

/* The discrete Fourier transforms (_fft_c2c, _fft_r2c, _fft_c2r; ops/fft.c): the dims
 * transformed, wrapped, in the order given (the last is r2c's halved and c2r's rebuilt dim),
 * the result's geometry and dtype, and the normalization's factor. */
typedef struct mt_fft_plan {
    int ndims;
    int dims[MT_MAX_DIMS];
    int ndim;
    int64_t sizes[MT_MAX_DIMS]; /* the result's */
    mt_dtype dt;                /* the result's */
    double scale;               /* 1, 1/sqrt(n) or 1/n; n the product of the signal's sizes */
} mt_fft_plan;

/* A result a front end states (mt_front_output, ops/front.h): the dispatcher allocates it on
 * the call's device, through that device's allocator, as a->out[k] before the kernel runs. */
typedef struct mt_out_spec {
    mt_dtype dtype;
    int ndim; /* MT_OUT_BY_KERNEL: its kernel makes it, of a size only its values show */
    int64_t sizes[MT_MAX_DIMS];
    int64_t strides[MT_MAX_DIMS]; /* contiguous unless the front end gave others */
    bool relayout; /* the kernel writes it row-major; the dispatcher then copies it into strides */
} mt_out_spec;

#define MT_OUT_BY_KERNEL (-1) /* mt_out_spec.ndim of a result the dispatcher does not allocate */

typedef struct mt_plan {
    mt_op op; /* set by the dispatcher */
    int nout; /* the results stated in out (the dispatcher starts it at 0: none stated, the
               * kernel makes its results itself) */
    mt_out_spec out[MT_MAX_OUTPUTS];
    union {
        mt_reduce_plan reduce;
        mt_product_plan product;
        conv_geom conv;
        conv3_geom conv3; /* conv3d */
        pool_geom pool; /* 2-D pooling and its backward ops: the windows */
        mt_resample_plan resample; /* the upsample ops and their backwards */
        mt_grid_geom grid; /* grid_sampler_2d and _3d and their backwards */
        mt_norm_plan norm;
        mt_loss_plan loss;
        mt_along_plan along;
        mt_shape_plan shape;
        mt_fft_plan fft;
        mt_range_spec range;
        mt_random_spec random;
        mt_scalar value; /* fill_: the value, read once */
        double scale; /* _scaled_dot_product_flash_attention_for_cpu: the scores' factor */
    };
} mt_plan;

#endif
