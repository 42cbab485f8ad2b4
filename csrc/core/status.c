/* The thread-local error message behind mt_fail(). Holds no other state. */
#include <stdarg.h>
#include <stdio.h>

#include "core/status.h"

/* Long enough for PyTorch's longest messages (shape lists of 16 dims). */
#define MT_ERRMSG_LEN 1024

static _Thread_local char errmsg[MT_ERRMSG_LEN];

mt_status
mt_fail(mt_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
    va_end(ap);
    return code;
}

const char *
mt_last_error(void)
{
    return errmsg;
}
