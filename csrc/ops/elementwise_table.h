/* What every consumer of ops/elementwise.def shares, for the front end (C), the CPU loops (C)
 * and the CUDA kernels (C++) alike: the rows' ids, and their forms (ops/elementwise_forms.h). */
#ifndef MT_OPS_ELEMENTWISE_TABLE_H
#define MT_OPS_ELEMENTWISE_TABLE_H

#include "ops/elementwise_forms.h"

/* The rows of ops/elementwise.def. */
typedef enum mt_ew_id {
#define MT_EW(name, form, dtypes, meta, scalars, kernel) MT_EW_##name,
#include "ops/elementwise.def"
    MT_NUM_EW
} mt_ew_id;

#endif
