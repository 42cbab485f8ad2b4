/* The meta device's allocator and kernels (dispatch/meta.c): tensors with a shape and no data. */
#ifndef MT_DISPATCH_META_H
#define MT_DISPATCH_META_H

#include "dispatch/dispatch.h"

/* Registers the meta allocator and the Meta key's kernels; called once at import. */
void mt_meta_init(void);

#endif
