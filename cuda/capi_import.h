/* Installing _C's C API table in _C_cuda (capi_import.c). */
#ifndef MT_CUDA_CAPI_IMPORT_H
#define MT_CUDA_CAPI_IMPORT_H

#include <stddef.h>

#include "capi/capi.h"

/* 0 once table is installed; -1 with the reason in why when it comes from another build. */
int mt_cuda_set_api(const mt_c_api *table, char *why, size_t n);

/* op's name in _C's table (mt_op_names there), once the table is installed */
const char *mt_cuda_op_name(mt_op op);

#endif
