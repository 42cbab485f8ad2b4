/* What binary.c's div needs from arith.c: division with a rounding mode. */
#ifndef MT_CPU_ARITH_H
#define MT_CPU_ARITH_H

#include "dispatch/dispatch.h"

/* div(self, other, rounding_mode=a->str[0]) for 'trunc' and 'floor' (else the error). */
mt_status mt_cpu_div_rounding(mt_args *a, bool inplace);

#endif
