/* Autocast (torch.autocast): per thread and device type, the ops of dispatch/autocast.def run
 * on their floating-point tensors cast as the op's policy says (dispatch/autocast.c).
 *
 * The dispatcher's only cost outside a region is one test of mt_autocast_on. */
#ifndef MT_DISPATCH_AUTOCAST_H
#define MT_DISPATCH_AUTOCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/dispatch.h"

/* bit (1 << device type) set while this thread's autocast for that device type is on */
extern _Thread_local unsigned mt_autocast_on;

/* Runs op through its autocast policy, then below (the dispatcher past autocast). */
typedef mt_status (*mt_autocast_below)(mt_op op, mt_args *a);
mt_status mt_autocast_dispatch(mt_op op, mt_args *a, mt_autocast_below below);

bool mt_autocast_enabled(mt_device_type dev);
void mt_autocast_set_enabled(mt_device_type dev, bool on);
/* the dtype LOWER casts to on dev: bfloat16 on the CPU and float16 on CUDA unless set */
mt_dtype mt_autocast_dtype(mt_device_type dev);
void mt_autocast_set_dtype(mt_device_type dev, mt_dtype dt);

/* The weight-cast cache: a leaf float32 tensor that requires grad is cast once per region. */
bool mt_autocast_cache_enabled(void);
void mt_autocast_set_cache_enabled(bool on);
void mt_autocast_clear_cache(void);
int64_t mt_autocast_cache_size(void);

#endif
