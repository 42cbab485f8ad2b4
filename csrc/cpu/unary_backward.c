/* Backward kernels of unary math that a formula cannot write with other ops: gelu's, whose
 * exact derivative needs erf (autograd's GeluBackward0 calls gelu_backward).
 *
 * Only loops and the dtype rule live here; the derivatives are core/math.h's. */

#include "core/math.h"
#include "cpu/elementwise.h"
#include "cpu/loops.h"
#include "dispatch/kernels.h"
#include "ops/arg_checks.h"

// out, g, x (T) broadcast to one shape; out = F(g, x), the gradient g times f'(x)
#define GRAD_LOOP(name, T, F)                                                    \
    static void name(char **data, const int64_t *strides, int64_t n, void *ctx) \
    {                                                                            \
        (void)ctx;                                                               \
        for (int64_t i = 0; i < n; i++) {                                        \
            MT_AT(T, 0, i) = F(MT_AT(T, 1, i), MT_AT(T, 2, i));                  \
        }                                                                        \
    }

GRAD_LOOP(gelu_backward_f32, float, mt_gelu_backward_f32)
GRAD_LOOP(gelu_backward_f64, double, mt_gelu_backward_f64)
GRAD_LOOP(gelu_tanh_backward_f32, float, mt_gelu_tanh_backward_f32)
GRAD_LOOP(gelu_tanh_backward_f64, double, mt_gelu_tanh_backward_f64)

// grad_output, self broadcast together (floats); out = grad_output * gelu'(self)
mt_status
mt_cpu_gelu_backward(mt_args *a)
{
    static const mt_loop_fn exact[MT_NUM_DTYPES] = {[MT_FLOAT32] = gelu_backward_f32,
                                                    [MT_FLOAT64] = gelu_backward_f64};
    static const mt_loop_fn tanh_form[MT_NUM_DTYPES] = {[MT_FLOAT32] = gelu_tanh_backward_f32,
                                                        [MT_FLOAT64] = gelu_tanh_backward_f64};
    bool use_tanh;
    mt_status st = mt_gelu_approximate(a->str[0], &use_tanh);
    if (st) {
        return st;
    }
    const mt_loop_fn *loops = use_tanh ? tanh_form : exact;
    mt_dtype dt = mt_result_type(a->t, 2);
    if (loops[dt] == NULL) {
        return mt_fail(MT_ENOTIMPL, "\"GeluBackwardKernelImpl\" not implemented for '%s'",
                       mt_dtype_scalar_name(dt));
    }
    return mt_cpu_elementwise(a->t, 2, dt, loops[dt], NULL, false, &a->out[0]);
}
