/* _C's C API, seen from _C_cuda: the table from the capsule minitorch._C._C_API and one
 * forwarding function per entry, so that backend code calls mt_tensor_empty() and mt_fail()
 * exactly as _C's own code does. The functions are hidden (-fvisibility=hidden): each plug-in
 * has its own. */
#include <stdarg.h>
#include <stdio.h>

#include "capi/capi.h"
#include "cuda/capi_import.h"

static const mt_c_api *api;

int
mt_cuda_set_api(const mt_c_api *table, char *why, size_t n)
{
    if (table->version != MT_CAPI_VERSION || table->size != (int)sizeof(mt_c_api) ||
        table->num_ops != MT_NUM_OPS) {
        snprintf(why, n,
                 "minitorch._C_cuda was built for another minitorch._C (C API version %d, %d "
                 "ops; _C has version %d, %d ops): rebuild both",
                 MT_CAPI_VERSION, MT_NUM_OPS, table->version, table->num_ops);
        return -1;
    }
    api = table;
    return 0;
}

const char *
mt_cuda_op_name(mt_op op)
{
    return api->op_names[op];
}

mt_status
mt_fail(mt_status code, const char *fmt, ...)
{
    char msg[1024]; /* _C's message buffer holds as much */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return api->mt_fail(code, "%s", msg);
}

/* the ops/fails.h messages the backend still raises itself (the others come from the front ends
 * and the device-side asserts), through the table's one entry mt_fail_kernel */
mt_status
mt_fail_not_implemented(const char *kernel, const char *suffix, mt_dtype dt)
{
    return api->mt_fail_kernel(MT_FAIL_NOT_IMPLEMENTED,
                               &(mt_fail_args){.kernel = kernel, .suffix = suffix, .dtype = dt});
}

mt_status
mt_fail_one_hot_class(bool negative)
{
    return api->mt_fail_kernel(MT_FAIL_ONE_HOT_CLASS, &(mt_fail_args){.flag = negative});
}

#define MT_CAPI_FORWARD(ret, name, params, args) \
    ret name params                              \
    {                                            \
        return api->name args;                   \
    }
#define MT_CAPI_VFORWARD(name, params, args) \
    void name params                         \
    {                                        \
        api->name args;                      \
    }
MT_CAPI_FUNCTIONS(MT_CAPI_FORWARD, MT_CAPI_VFORWARD)
