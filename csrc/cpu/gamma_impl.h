/* The gamma and binomial samplers and the reparameterised gradients of csrc/cpu/gamma.c for one
 * scalar type T (ATen's scalar_t; accscalar_t is double), instantiated there for double then
 * float with GAMMA_T and GAMMA_NAME(f) set. <tgmath.h> picks each function's float or double
 * version from its arguments, as C++'s std:: overloads do in ATen's Distributions.h, so the
 * values are PyTorch's to the bit. Included by gamma.c only. */
#define T GAMMA_T
#define F GAMMA_NAME

/* ATen's sample_gamma<T, double>: Marsaglia and Tsang's rejection (2000) on the generator's
 * normals and uniforms, alpha < 1 boosted to alpha + 1 and scaled by u^(1/alpha) */
static T
F(sample_gamma)(T alpha, mt_generator *g)
{
    double scale = 1.0f;
    if (alpha < 1.0f) {
        if (alpha == 0.f) {
            return 0;
        }
        scale *= pow(1 - mt_draw_uniform_f64(g), 1.0f / alpha);
        alpha += 1.0f;
    }
    const double d = alpha - 1.0f / 3.0f;
    const double c = 1.0f / sqrt(9.0f * d);
    for (;;) {
        double x, y;
        do {
            x = mt_draw_normal_f64(g);
            y = 1.0f + c * x;
        } while (y <= 0);
        const double v = y * y * y;
        const double u = 1 - mt_draw_uniform_f64(g);
        const double xx = x * x;
        if (u < 1.0f - 0.0331f * xx * xx) {
            return (T)(scale * d * v);
        }
        if (log(u) < 0.5f * xx + d * (1.0f - v + log(v))) {
            return (T)(scale * d * v);
        }
    }
}

/* ATen's digamma_one<T, double> (Cephes) */
static T
F(digamma_one)(T x)
{
    static const double A[] = {
        8.33333333333333333333E-2,  -2.10927960927960927961E-2, 7.57575757575757575758E-3,
        -4.16666666666666666667E-3, 3.96825396825396825397E-3,  -8.33333333333333333333E-3,
        8.33333333333333333333E-2,
    };
    const double psi_10 = 2.25175258906672110764;
    if (x == 0) {
        return INFINITY;
    }
    double additional_summand = 0;
    bool x_is_integer = x == floor(x);
    if (x < 0) {
        if (x_is_integer) {
            return INFINITY;
        }
        additional_summand = -(T)GAMMA_PI / tan((T)GAMMA_PI * x);
        x = 1 - x;
    }
    double result = 0;
    while (x < 10) {
        result -= 1 / x;
        x += 1;
    }
    if (x == 10) {
        return (T)(result + psi_10 + additional_summand);
    }
    double y = 0;
    if (x < 1.0e17f) {
        double z = 1.0 / (x * x), p = 0;
        for (int i = 0; i < 7; i++) {
            p = p * z + A[i];
        }
        y = z * p;
    }
    return (T)(result + log(x) - (0.5f / x) - y + additional_summand);
}

/* ATen's _beta_grad_alpha_small: a Taylor series for x near 0, in T */
static T
F(beta_grad_alpha_small)(T x, T alpha, T beta)
{
    const T factor = F(digamma_one)(alpha) - F(digamma_one)(alpha + beta) - log(x);
    T numer = 1;
    T series = numer / alpha * (factor + 1 / alpha);
    for (int i = 1; i <= 10; ++i) {
        T casted_i = (T)i;
        numer *= (casted_i - beta) * x / casted_i;
        const T denom = alpha + casted_i;
        series += numer / denom * (factor + 1 / denom);
    }
    const T result = x * pow(1 - x, -beta) * series;
    return isnan(result) ? (T)0 : result;
}

/* ATen's _beta_grad_beta_small: the gradient in beta for x near 0, in T */
static T
F(beta_grad_beta_small)(T x, T alpha, T beta)
{
    const T factor = F(digamma_one)(alpha + beta) - F(digamma_one)(beta);
    T numer = 1, betas = 1, dbetas = 0, series = factor / alpha;
    for (int i = 1; i <= 8; ++i) {
        T casted_i = (T)i;
        numer *= -x / casted_i;
        dbetas = dbetas * (beta - casted_i) + betas;
        betas = betas * (beta - casted_i);
        series += numer / (alpha + casted_i) * (dbetas + factor * betas);
    }
    const T result = -pow(1 - x, 1 - beta) * series;
    return isnan(result) ? (T)0 : result;
}

/* ATen's dirichlet_grad_one<T, double>: -(d/dalpha cdf(x; alpha, beta)) / pdf / (1 - x) for x
 * drawn from Beta(alpha, total - alpha) */
static T
F(dirichlet_grad_one)(T x, T alpha, T total)
{
    double x_ = x, alpha_ = alpha, total_ = total;
    const T beta = total - alpha;
    const double beta_ = total_ - alpha_;
    const T boundary = total * x * (1 - x);
    if (x <= 0.5f && boundary < 2.5f) {
        return F(beta_grad_alpha_small)(x, alpha, beta);
    }
    if (x >= 0.5f && boundary < 0.75f) {
        return -F(beta_grad_beta_small)(1 - x, beta, alpha);
    }
    if (alpha > 6 && beta > 6) {
        return (T)beta_grad_alpha_mid(x_, alpha_, beta_);
    }
    const double u = log(x_);
    const double a = log(alpha_) - u;
    const double b = log(total_) - a;
    const double pow_u[3] = {1, u, u * u};
    const double pow_a[3] = {1, a, a * a};
    double p = 0.0, q = 0.0;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            const double ua = pow_u[i] * pow_a[j];
            const double *cp = dirichlet_c[0][i][j], *cq = dirichlet_c[1][i][j];
            p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])));
            q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])));
        }
    }
    const double approx = x_ * (F(digamma_one)((T)total_) - F(digamma_one)((T)alpha_)) / beta_;
    return (T)(p / q * approx);
}

/* ATen's binomial_inversion<T, double>: the count of geometric waiting times (in trials, from
 * uniforms) that fit in count trials; for count * prob below 10 */
static T
F(binomial_inversion)(T count, T prob, mt_generator *g)
{
    double geom_sum = 0;
    T num_geom = 0;
    const double logprob = log1p(-prob);
    for (;;) {
        const double geom = ceil(log(mt_draw_uniform_f64(g)) / logprob);
        geom_sum += geom;
        if (geom_sum > count) {
            return num_geom;
        }
        num_geom = num_geom + 1;
    }
}

/* ATen's btrs<T, double>: Hoermann's transformed rejection with squeeze ("The generation of
 * binomial random variates", 1993), prob at most 0.5, count * prob from 10 on. As ATen's (after
 * TensorFlow's), the test outside the box compares log(V * alpha / ...) with the log of the
 * ratio of probabilities, with Stirling tails (stirling_approx_tail, in double). */
static T
F(btrs)(T count, T prob, mt_generator *g)
{
    const double stddev = sqrt(count * prob * (1 - prob)); /* spq in the paper */
    const double b = 1.15 + 2.53 * stddev;
    const double a = -0.0873 + 0.0248 * b + 0.01 * prob;
    const double c = count * prob + 0.5;
    const double v_r = 0.92 - 4.2 / b;
    const double r = prob / (1 - prob);
    const double alpha = (2.83 + 5.1 / b) * stddev;
    const double m = floor((count + 1) * prob);
    for (;;) {
        const double U = mt_draw_uniform_f64(g) - 0.5;
        double V = mt_draw_uniform_f64(g);
        const double us = 0.5 - fabs(U);
        const T k = (T)floor((2 * a / us + b) * U + c);
        if (k < 0 || k > count) {
            continue;
        }
        if (us >= 0.07 && V <= v_r) { /* inside the box: accepted at once */
            return k;
        }
        V = log(V * alpha / (a / (us * us) + b));
        const double upperbound = (m + 0.5) * log((m + 1) / (r * (count - m + 1))) +
                                  (count + 1) * log((count - m + 1) / (count - k + 1)) +
                                  (k + 0.5) * log(r * (count - k + 1) / (k + 1)) +
                                  stirling_approx_tail(m) + stirling_approx_tail(count - m) -
                                  stirling_approx_tail(k) - stirling_approx_tail(count - k);
        if (V <= upperbound) {
            return k;
        }
    }
}

/* ATen's sample_binomial<T, double>: 0 for a count or prob at most 0, count from prob 1 on, NaN
 * for a NaN prob; else BTRS or inversion on the smaller of prob and 1 - prob. A NaN count with
 * prob in (0, 1) is NaN here: ATen's inversion never ends on it. */
static T
F(sample_binomial)(T count, T prob, mt_generator *g)
{
    if (count <= 0.0 || prob <= 0.0) {
        return 0;
    }
    if (prob >= 1.0) {
        return count;
    }
    if (isnan(count)) {
        return count;
    }
    if (prob <= 0.5) {
        return count * prob >= 10.0 ? F(btrs)(count, prob, g)
                                    : F(binomial_inversion)(count, prob, g);
    }
    if (prob > 0.5) {
        const T qprob = (T)(1.0 - prob);
        return count * qprob >= 10.0 ? count - F(btrs)(count, qprob, g)
                                     : count - F(binomial_inversion)(count, qprob, g);
    }
    return (T)NAN;
}

#undef F
#undef T
