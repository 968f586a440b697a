/* Statistics over replicate values for the sweep views (views/replicates.c):
 * a summary (count, mean, sample standard deviation, range) and the paired
 * t-test that says whether two cells' difference at equal seeds is within
 * the seed noise. Pure arithmetic: no SQL, no JSON. */
#ifndef COD_VIEWS_STATS_H
#define COD_VIEWS_STATS_H

struct summary {
    int n;
    double mean, sd, min, max;  /* sd: sample (n − 1) deviation, NaN below two values */
};
void stats_summary(const double *x, int n, struct summary *s);

/* Two-sided paired t-test of the differences d[0..n): their mean and
 * standard deviation, t, the p-value with n − 1 degrees of freedom and the
 * 95 % confidence interval of the mean difference. -1 below two pairs.
 * Identical differences (sd 0) give p = 1 when they are all 0, else 0. */
struct paired {
    int n;
    double mean, sd, t, p, lo, hi;
};
int stats_paired_t(const double *d, int n, struct paired *out);

/* Student's t: P(|T| ≥ t) with df degrees of freedom, and the t that
 * P(|T| ≥ t) = p gives (0 < p < 1). */
double stats_t_two_sided(double t, double df);
double stats_t_critical(double p, double df);

#endif
