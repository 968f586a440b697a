#include "views/stats.h"

#include <math.h>

void stats_summary(const double *x, int n, struct summary *s)
{
    s->n = n;
    s->mean = s->sd = s->min = s->max = NAN;
    if (n < 1)
        return;
    double sum = 0;
    s->min = s->max = x[0];
    for (int i = 0; i < n; i++) {
        sum += x[i];
        s->min = x[i] < s->min ? x[i] : s->min;
        s->max = x[i] > s->max ? x[i] : s->max;
    }
    s->mean = sum / n;
    if (n < 2)
        return;
    /* two passes: the deviations of replicates are small against their
     * mean, where a sum of squares would cancel */
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (x[i] - s->mean) * (x[i] - s->mean);
    s->sd = sqrt(ss / (n - 1));
}

/* The continued fraction of the regularized incomplete beta function
 * (modified Lentz), which converges fast for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = fabs(d) < tiny ? tiny : d;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + num * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + num / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + num * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1 + num / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1) < 1e-15)
            break;
    }
    return h;
}

/* I_x(a, b) */
static double beta_reg(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double stats_t_two_sided(double t, double df)
{
    if (isinf(t))
        return 0;
    return beta_reg(df / 2, 0.5, df / (df + t * t));
}

double stats_t_critical(double p, double df)
{
    /* P(|T| ≥ t) falls from 1 at t = 0: bisect, doubling the bracket first */
    double lo = 0, hi = 1;
    while (stats_t_two_sided(hi, df) > p && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (stats_t_two_sided(mid, df) > p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

int stats_paired_t(const double *d, int n, struct paired *out)
{
    if (n < 2)
        return -1;
    struct summary s;
    stats_summary(d, n, &s);
    double se = s.sd / sqrt((double)n), df = n - 1;
    out->n = n;
    out->mean = s.mean;
    out->sd = s.sd;
    if (se == 0) {
        out->t = s.mean == 0 ? 0 : copysign(INFINITY, s.mean);
        out->p = s.mean == 0 ? 1 : 0;
        out->lo = out->hi = s.mean;
        return 0;
    }
    out->t = s.mean / se;
    out->p = stats_t_two_sided(out->t, df);
    double half = stats_t_critical(0.05, df) * se;
    out->lo = s.mean - half;
    out->hi = s.mean + half;
    return 0;
}
