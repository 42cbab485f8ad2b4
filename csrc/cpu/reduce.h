/* What the CPU reduction files share: which dims a reduction covers and the shape of its
 * result, now device-independent in ops/reduce_dims.h (the CUDA reductions use them too). */
#ifndef MT_CPU_REDUCE_H
#define MT_CPU_REDUCE_H

#include "ops/reduce_dims.h"

#endif
