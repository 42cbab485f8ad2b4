/* Op calls from Python that release the GIL while a long kernel runs.
 *
 * Releasing and taking back the GIL costs little alone, but a thread that gives it up waits for
 * it again behind every other runnable thread (up to the 5 ms switch interval each), so only calls
 * with enough work release it: all CPU, and inputs of at least MT_NOGIL_NUMEL elements (fewer for
 * the ops whose work grows faster than their inputs). What runs without the GIL is plain C: the
 * dispatcher, kernels, autograd recording, allocators, profiler and tracer keep their own state
 * thread-safe (thread-local, atomic or locked), and the few callbacks into Python (a Python
 * buffer's or DLPack owner's release, an autograd.Function's node freed) take the GIL themselves
 * with PyGILState_Ensure. CUDA calls keep the GIL: their launches are asynchronous anyway. */
#include "dispatch/deterministic.h"
#include "python/pyminitorch.h"

/* 32768 elements: about 10 us of the simplest elementwise kernel, 100 times the GIL's round trip */
#define MT_NOGIL_NUMEL ((int64_t)1 << 15)
/* matmuls, convolutions and sorts do far more than one step per input element */
#define MT_NOGIL_NUMEL_HEAVY ((int64_t)1 << 10)

static bool
heavy(mt_op op)
{
    switch (op) {
    case MT_OP_mm:
    case MT_OP_bmm:
    case MT_OP_baddbmm:
    case MT_OP_matmul:
    case MT_OP_addmm:
    case MT_OP_linear:
    case MT_OP_conv2d:
    case MT_OP_convolution_backward_input:
    case MT_OP_convolution_backward_weight:
    case MT_OP_sort:
    case MT_OP_argsort:
    case MT_OP_topk:
        return true;
    default:
        return false;
    }
}

/* Adds t's elements to *numel; false when t is not on the CPU. */
static bool
count(const mt_tensor *t, int64_t *numel)
{
    if (t == NULL) {
        return true;
    }
    if (mt_tensor_device(t).type != MT_CPU) {
        return false;
    }
    *numel += mt_tensor_numel(t);
    return true;
}

bool
mt_py_worth_releasing_gil(mt_op op, const mt_args *a)
{
    if (a->has_device && a->device.type != MT_CPU) {
        return false;
    }
    int64_t numel = 0;
    for (int k = 0; k < MT_MAX_TENSOR_ARGS; k++) {
        if (!count(a->t[k], &numel)) {
            return false;
        }
    }
    for (int k = 0; k < a->ntl; k++) {
        if (!count(a->tl[k], &numel)) {
            return false;
        }
    }
    return numel >= (heavy(op) ? MT_NOGIL_NUMEL_HEAVY : MT_NOGIL_NUMEL);
}

int
mt_py_give_deterministic_warning(void)
{
    const char *msg = mt_deterministic_take_warning();
    return msg == NULL ? 0 : PyErr_WarnEx(PyExc_UserWarning, msg, 1);
}

mt_status
mt_py_dispatch(mt_op op, mt_args *a)
{
    mt_status st;
    if (!mt_py_worth_releasing_gil(op, a)) {
        st = mt_dispatch(op, a);
    } else {
        Py_BEGIN_ALLOW_THREADS st = mt_dispatch(op, a);
        Py_END_ALLOW_THREADS
    }
    if (st == MT_OK && mt_deterministic_on && mt_py_give_deterministic_warning() < 0) {
        /* the warning was turned into an error: the results are dropped, the error stands */
        for (int k = 0; k < MT_MAX_OUTPUTS; k++) {
            mt_tensor_clear(&a->out[k]);
        }
        mt_args_clear_outl(a);
        return MT_EPYTHON;
    }
    return st;
}
