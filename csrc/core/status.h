/* Status codes and the error message of the C core.
 *
 * The core never raises and never exits: a function that can fail returns an mt_status after
 * recording a message with mt_fail(). Only csrc/python/ turns a status into a Python exception.
 * This header must not include Python.h. */
#ifndef MT_STATUS_H
#define MT_STATUS_H

typedef enum mt_status {
    MT_OK = 0,
    MT_ERUNTIME,  /* generic failure -> RuntimeError */
    MT_ESHAPE,    /* shapes that do not fit together -> RuntimeError */
    MT_EDTYPE,    /* a dtype an op does not accept -> RuntimeError */
    MT_EDEVICE,   /* tensors on different or unavailable devices -> RuntimeError */
    MT_EINDEX,    /* index or dim out of range -> IndexError */
    MT_ETYPE,     /* argument of the wrong kind -> TypeError */
    MT_EVALUE,    /* argument with a bad value -> ValueError */
    MT_ENOMEM,    /* host allocation failed -> RuntimeError, as PyTorch's DefaultCPUAllocator */
    MT_ECUDA_OOM, /* device allocation failed -> minitorch.cuda.OutOfMemoryError */
    MT_ECUDA,     /* a CUDA runtime or library call failed -> RuntimeError */
    MT_ENOTIMPL,  /* no kernel for this op, key or dtype -> NotImplementedError */
    MT_EPYTHON,   /* Python code called from C (autograd.Function) raised: its error stands */
    MT_ENOCUDA,   /* a CUDA device asked of a build without the CUDA backend -> AssertionError */
    MT_ELINALG,   /* a matrix a linear algebra op cannot take (singular, not positive-definite,
                   * no convergence) -> minitorch.linalg.LinAlgError, a RuntimeError */
} mt_status;

/* Records the message (printf format) for the calling thread and returns code. */
mt_status mt_fail(mt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The message of the last failure on this thread. */
const char *mt_last_error(void);

#endif
