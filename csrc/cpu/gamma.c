/* The CPU kernels of the gamma, Dirichlet and binomial draws and of the reparameterised
 * gradients: _standard_gamma, _sample_dirichlet, binomial, _standard_gamma_grad, _dirichlet_grad.
 * PyTorch's CPU algorithms (ATen/native/Distributions.cpp and .h: sample_gamma, sample_binomial,
 * standard_gamma_grad_one, dirichlet_grad_one) on PyTorch's stream (cpu/random.h), so a seed gives PyTorch's draws. The
 * checks are the front ends' (ops/distributions.c). */
#include <float.h>
#include <stdbool.h>
#include <string.h>
#include <tgmath.h>

#include "cpu/random.h"
#include "dispatch/kernels.h"
#include "ops/ops.h"
#include "ops/plans.h"

#define GAMMA_PI 3.14159265358979323846

/* ATen's _beta_grad_alpha_mid: a Rice saddle point expansion for large alpha and beta, in
 * double */
static double
beta_grad_alpha_mid(double x, double alpha, double beta)
{
    const double total = alpha + beta;
    const double mean = alpha / total;
    const double std = sqrt(alpha * beta / (total + 1)) / total;
    if (mean - 0.1 * std <= x && x <= mean + 0.1 * std) { /* avoid the singularity at the mean */
        const double poly = 47 * x * (beta * beta) * (beta * beta) +
                            alpha *
                                ((43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta +
                                 alpha * (3 * (59 + 180 * beta - 90 * x) * (beta * beta) +
                                          alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta +
                                                   alpha * (8 * (1 - x) * (135 * beta - 11)))));
        const double prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
        const double prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
        return prefactor_num / (1 - x) * poly / prefactor_den;
    }
    const double prefactor = -x / sqrt(2 * alpha * beta / total);
    const double stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) *
                            (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) /
                            (1 + 1 / (12 * total) + 1 / (288 * total * total));
    const double term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) -
                             x * (beta * beta);
    const double axbx = alpha * (x - 1) + beta * x;
    const double term1_den = sqrt(2 * alpha / beta) * pow(total, (double)1.5f) * axbx * axbx;
    const double term1 = term1_num / term1_den;
    const double term2 = 0.5f * log(alpha / (total * x));
    const double term3_num = sqrt(8 * alpha * beta / total);
    const double term3_den = beta * x + alpha * (x - 1);
    const double term3 = term3_num / term3_den;
    const double term4_base = beta * log(beta / (total * (1 - x))) +
                              alpha * log(alpha / (total * x));
    const double term4 = pow(term4_base, (double)-1.5f);
    const double term1234 = term1 + term2 * (term3 + (x < mean ? term4 : -term4));
    return stirling * prefactor * term1234;
}

/* dirichlet_grad_one's rational correction to its analytic approximation */
static const double dirichlet_c[2][3][3][4] = {
    {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
      {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
      {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
     {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
      {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
      {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
     {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
      {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
      {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
    {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
      {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
      {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
     {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
      {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
      {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
     {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
      {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
      {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
};

/* ATen's stirling_approx_tail<double>: log(k!) less its Stirling approximation, tabulated below
 * 10 */
static double
stirling_approx_tail(double k)
{
    static const double tail[10] = {
        0.0810614667953272,  0.0413406959554092,  0.0276779256849983, 0.02079067210376509,
        0.0166446911898211,  0.0138761288230707,  0.0118967099458917, 0.0104112652619720,
        0.00925546218271273, 0.00833056343336287,
    };
    if (k < 10) {
        return tail[(size_t)k];
    }
    const double kp1sq = (k + 1) * (k + 1);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

#define GAMMA_T double
#define GAMMA_NAME(f) f##_f64
#include "cpu/gamma_impl.h"
#undef GAMMA_NAME
#undef GAMMA_T
#define GAMMA_T float
#define GAMMA_NAME(f) f##_f32
#include "cpu/gamma_impl.h"
#undef GAMMA_NAME
#undef GAMMA_T

/* ATen's standard_gamma_grad_one<T, double>: -(d/dalpha cdf(x; alpha)) / pdf(x; alpha) for x
 * drawn from Gamma(alpha): a Taylor series for small x, Rice's saddle point expansion for large
 * alpha, else a bivariate rational approximation */
static double
standard_gamma_grad_one(double alpha, double x)
{
    static const double coef_uv[3][8] = {
        {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089,
         0.0014179084},
        {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
         -0.00058392623},
        {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
         0.00085092367, -1.5247877e-07},
    };
    if (x < 0.8f) {
        double numer = 1, denom = alpha;
        double series1 = numer / denom, series2 = numer / (denom * denom);
        for (int i = 1; i <= 5; ++i) {
            numer *= -x / (double)i;
            denom += 1;
            series1 += numer / denom;
            series2 += numer / (denom * denom);
        }
        const double pow_x_alpha = pow(x, alpha);
        const double gamma_pdf = pow(x, alpha - 1) * exp(-x);
        const double gamma_cdf = pow_x_alpha * series1;
        const double gamma_cdf_alpha = (log(x) - digamma_one_f64(alpha)) * gamma_cdf -
                                       pow_x_alpha * series2;
        const double result = -gamma_cdf_alpha / gamma_pdf;
        return isnan(result) ? 0 : result;
    }
    if (alpha > 8.0f) {
        if (0.9f * alpha <= x && x <= 1.1f * alpha) {
            const double numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
            const double numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) -
                                   65 * x * x / alpha + alpha * (107 + 3600 * x);
            const double denom = 1244160 * (alpha * alpha) * (alpha * alpha);
            return numer_1 * numer_2 / denom;
        }
        const double denom = sqrt(8 * alpha);
        const double term2 = denom / (alpha - x);
        const double term3 = pow(x - alpha - alpha * log(x / alpha), -1.5);
        const double term23 = (x < alpha) ? term2 - term3 : term2 + term3;
        const double term1 = log(x / alpha) * term23 -
                             sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
        const double stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
        const double numer = x * term1;
        return -stirling * numer / denom;
    }
    const double u = log(x / alpha), v = log(alpha);
    double coef_v[8];
    for (int i = 0; i < 8; ++i) {
        coef_v[i] = coef_uv[0][i] + u * (coef_uv[1][i] + u * coef_uv[2][i]);
    }
    const double p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]));
    const double q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]));
    return exp(p / q);
}

/* ---- the kernels: flat loops over contiguous operands of the output's shape, in its order
 * (TensorIterator's over a new output) ---- */

/* The operands t[0 .. n-1] expanded to the result's shape (their broadcast shape: the front
 * end stated it, contiguous, as a->out[0]), contiguous (new references in in[]) */
static mt_status
operands(mt_args *a, int n, mt_tensor **in)
{
    const mt_tensor *out = a->out[0];
    mt_tensor *e = NULL;
    mt_status st = MT_OK;
    for (int k = 0; k < n && st == MT_OK; k++) {
        if ((st = mt_op_expand(a->t[k], out->ndim, out->sizes, &e)) == MT_OK) {
            st = mt_op_contiguous(e, &in[k]);
        }
        mt_tensor_clear(&e);
    }
    return st;
}

/* Releases the operands in[0 .. n-1]; returns st. */
static mt_status
finish(mt_tensor **in, int n, mt_status st)
{
    for (int k = 0; k < n; k++) {
        mt_tensor_clear(&in[k]);
    }
    return st;
}

// self (any shape) concentrations; out (self's shape) = a standard gamma draw of each, at least
// the dtype's smallest normal number
mt_status
mt_cpu__standard_gamma(mt_args *a)
{
    mt_tensor *out = a->out[0], *in[1] = {NULL};
    mt_generator *g;
    mt_status st = mt_generator_for(a->gen, MT_DEVICE_CPU, &g);
    if (st || (st = operands(a, 1, in))) {
        return finish(in, 1, st);
    }
    int64_t n = mt_tensor_numel(out);
    mt_generator_lock(g);
    if (out->dtype == MT_FLOAT32) {
        const float *alpha = (const float *)mt_tensor_data(in[0]);
        float *o = (float *)mt_tensor_data(out);
        for (int64_t i = 0; i < n; i++) {
            o[i] = fmax(FLT_MIN, sample_gamma_f32(alpha[i], g));
        }
    } else {
        const double *alpha = (const double *)mt_tensor_data(in[0]);
        double *o = (double *)mt_tensor_data(out);
        for (int64_t i = 0; i < n; i++) {
            o[i] = fmax(DBL_MIN, sample_gamma_f64(alpha[i], g));
        }
    }
    mt_generator_unlock(g);
    return finish(in, 1, MT_OK);
}

// count, prob (broadcast to the result's shape); out (contiguous) = a binomial draw of each pair,
// in out's order (ATen's _s_binomial_cpu: a serial loop over a new output)
mt_status
mt_cpu_binomial(mt_args *a)
{
    mt_tensor *out = a->out[0], *in[2] = {NULL, NULL};
    mt_generator *g;
    mt_status st = mt_generator_for(a->gen, MT_DEVICE_CPU, &g);
    if (st || (st = operands(a, 2, in))) {
        return finish(in, 2, st);
    }
    int64_t n = mt_tensor_numel(out);
    mt_generator_lock(g);
    if (out->dtype == MT_FLOAT32) {
        const float *count = (const float *)mt_tensor_data(in[0]);
        const float *prob = (const float *)mt_tensor_data(in[1]);
        float *o = (float *)mt_tensor_data(out);
        for (int64_t i = 0; i < n; i++) {
            o[i] = sample_binomial_f32(count[i], prob[i], g);
        }
    } else {
        const double *count = (const double *)mt_tensor_data(in[0]);
        const double *prob = (const double *)mt_tensor_data(in[1]);
        double *o = (double *)mt_tensor_data(out);
        for (int64_t i = 0; i < n; i++) {
            o[i] = sample_binomial_f64(count[i], prob[i], g);
        }
    }
    mt_generator_unlock(g);
    return finish(in, 2, MT_OK);
}

/* PyTorch's CPU sum of a contiguous row of doubles (SumKernel.cpp's vectorized_inner_sum over
 * 4-double vectors): row_sum's four interleaved vector accumulators, summed in cascading levels
 * (multi_row_sum), the vectors' lanes added after the row's tail. The Dirichlet draws divide by
 * it, so that they are PyTorch's to the bit. */
typedef struct vec4 {
    double v[4];
} vec4;

static void
vec4_add(vec4 *a, const double *b)
{
    for (int k = 0; k < 4; k++) {
        a->v[k] += b[k];
    }
}

static double
torch_row_sum(const double *g, int64_t n)
{
    enum { LEVELS = 4, ILP = 4 };
    const int64_t vectors = n / 4, rows = vectors / ILP;
    int64_t ceil_log2 = rows <= 2 ? 1 : 64 - __builtin_clzll((unsigned long long)(rows - 1));
    int64_t level_power = ceil_log2 / LEVELS > 4 ? ceil_log2 / LEVELS : 4;
    int64_t level_step = INT64_C(1) << level_power, level_mask = level_step - 1, i = 0;
    vec4 acc[LEVELS][ILP] = {0};
    while (i + level_step <= rows) {
        for (int64_t j = 0; j < level_step; j++, i++) {
            for (int k = 0; k < ILP; k++) {
                vec4_add(&acc[0][k], g + (i * ILP + k) * 4);
            }
        }
        for (int j = 1; j < LEVELS; j++) {
            for (int k = 0; k < ILP; k++) {
                vec4_add(&acc[j][k], acc[j - 1][k].v);
                acc[j - 1][k] = (vec4){{0, 0, 0, 0}};
            }
            if ((i & (level_mask << (j * level_power))) != 0) {
                break;
            }
        }
    }
    for (; i < rows; i++) {
        for (int k = 0; k < ILP; k++) {
            vec4_add(&acc[0][k], g + (i * ILP + k) * 4);
        }
    }
    for (int j = 1; j < LEVELS; j++) {
        for (int k = 0; k < ILP; k++) {
            vec4_add(&acc[0][k], acc[j][k].v);
        }
    }
    for (int64_t v = rows * ILP; v < vectors; v++) {
        vec4_add(&acc[0][0], g + v * 4);
    }
    for (int k = 1; k < ILP; k++) {
        vec4_add(&acc[0][0], acc[0][k].v);
    }
    double sum = 0;
    for (int64_t k = vectors * 4; k < n; k++) {
        sum += g[k];
    }
    for (int k = 0; k < 4; k++) {
        sum += acc[0][0].v[k];
    }
    return sum;
}

// self (any shape, the last dim the categories) concentrations; out (self's shape) = Dirichlet
// draws along the last dim: gamma draws in double, each over its row's sum (PyTorch's),
// clamped to [smallest normal, largest below 1]
mt_status
mt_cpu__sample_dirichlet(mt_args *a)
{
    mt_tensor *out = a->out[0], *in[1] = {NULL}, *gamma = NULL;
    mt_generator *g;
    mt_status st = mt_generator_for(a->gen, MT_DEVICE_CPU, &g);
    if (st || (st = operands(a, 1, in))) {
        return finish(in, 1, st);
    }
    mt_tensor *self = a->t[0];
    int64_t n = mt_tensor_numel(out), k = self->ndim > 0 ? self->sizes[self->ndim - 1] : 1;
    /* the gamma draws in double: a workspace, each over its row's sum written into out */
    if ((st = mt_tensor_empty(self->ndim, self->sizes, MT_FLOAT64, MT_DEVICE_CPU, &gamma))) {
        goto out_release;
    }
    bool f32 = out->dtype == MT_FLOAT32;
    double *gm = (double *)mt_tensor_data(gamma);
    mt_generator_lock(g);
    for (int64_t i = 0; i < n; i++) {
        double alpha = f32 ? ((const float *)mt_tensor_data(in[0]))[i]
                           : ((const double *)mt_tensor_data(in[0]))[i];
        gm[i] = fmax(DBL_MIN, sample_gamma_f64(alpha, g));
    }
    mt_generator_unlock(g);
    for (int64_t r = 0; k > 0 && r < n; r += k) {
        double sum = torch_row_sum(gm + r, k);
        for (int64_t j = r; j < r + k; j++) {
            double v = gm[j] / sum;
            if (f32) {
                float x = fmax(FLT_MIN, (float)v);
                ((float *)mt_tensor_data(out))[j] = fmin(nextafterf(1.0f, 0.0f), x);
            } else {
                ((double *)mt_tensor_data(out))[j] = fmin(nextafter(1.0, 0.0), fmax(DBL_MIN, v));
            }
        }
    }
out_release:
    mt_tensor_clear(&gamma);
    return finish(in, 1, st);
}

/* the gradients' loops: out[i] = f(in[0][i], in[1][i] (, in[2][i])) */
static void
grad_f32(mt_tensor *out, mt_tensor *const *in, bool dirichlet)
{
    float *o = (float *)mt_tensor_data(out);
    const float *x0 = (const float *)mt_tensor_data(in[0]),
                *x1 = (const float *)mt_tensor_data(in[1]);
    const float *x2 = dirichlet ? (const float *)mt_tensor_data(in[2]) : NULL;
    for (int64_t i = 0, n = mt_tensor_numel(out); i < n; i++) {
        o[i] = dirichlet ? dirichlet_grad_one_f32(x0[i], x1[i], x2[i])
                         : (float)standard_gamma_grad_one(x0[i], x1[i]);
    }
}

static void
grad_f64(mt_tensor *out, mt_tensor *const *in, bool dirichlet)
{
    double *o = (double *)mt_tensor_data(out);
    const double *x0 = (const double *)mt_tensor_data(in[0]);
    const double *x1 = (const double *)mt_tensor_data(in[1]);
    const double *x2 = dirichlet ? (const double *)mt_tensor_data(in[2]) : NULL;
    for (int64_t i = 0, n = mt_tensor_numel(out); i < n; i++) {
        o[i] = dirichlet ? dirichlet_grad_one_f64(x0[i], x1[i], x2[i])
                         : standard_gamma_grad_one(x0[i], x1[i]);
    }
}

// _standard_gamma_grad: self (any shape) concentrations, output (expands to self's shape) their
// gamma draws; out = the draws' derivatives in the concentrations (the reparameterised
// gradient). _dirichlet_grad (ops.def's CPU_AS(gamma_grad) rows; the plan's op tells them
// apart): x (any shape) Beta draws, alpha and total (expand to x's shape); out = the derivative
// of x in alpha for Beta(alpha, total - alpha), scaled by 1 / (1 - x) (Dirichlet's backward)
mt_status
mt_cpu_gamma_grad(mt_args *a)
{
    const bool dirichlet = a->plan->op == MT_OP__dirichlet_grad;
    int n = dirichlet ? 3 : 2;
    mt_tensor *out = a->out[0], *in[3] = {NULL, NULL, NULL};
    mt_status st = operands(a, n, in);
    if (st) {
        return finish(in, n, st);
    }
    if (out->dtype == MT_FLOAT32) {
        grad_f32(out, in, dirichlet);
    } else {
        grad_f64(out, in, dirichlet);
    }
    return finish(in, n, MT_OK);
}
