/* Installing _C's C API table in _C_cuda (capi_import.c). */
#ifndef MT_CUDA_CAPI_IMPORT_H
#define MT_CUDA_CAPI_IMPORT_H

#include <stddef.h>

#include "capi/capi.h"

/* 0 once table is installed; -1 with the reason in why when it comes from another build. */
int mt_cuda_set_api(const mt_c_api *table, char *why, size_t n);

#endif
