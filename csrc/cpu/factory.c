/* Factories on the CPU: empty (the ones that compute their values are ranges.c's). */
#include "dispatch/kernels.h"
#include "ops/factory_args.h"
#include "ops/front.h"

// out (size) uninitialised: the dispatcher allocated it as the front end stated
mt_status
mt_cpu_empty(mt_args *a)
{
    return mt_factory_finish(a);
}
