/* The progress line: see progress.h. */
#include "prep/progress.h"

#include <stdio.h>
#include <time.h>

double progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void progress_start(struct progress *p, int on, const char *label, int64_t total)
{
    *p = (struct progress){.on = on, .label = label, .total = total, .start = progress_now()};
}

static void duration(char *out, size_t n, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(out, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else
        snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
}

void progress_draw(struct progress *p, int64_t stored, int64_t text, int64_t docs, int64_t skipped, int final)
{
    if (!p->on)
        return;
    double t = progress_now();
    if (!final && t - p->last < 0.1)
        return;
    p->last = t;
    double frac = p->total > 0 ? (double)stored / (double)p->total : 1.0;
    if (frac > 1 || final)
        frac = 1;
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[30] = 0;
    double el = t - p->start;
    char eta[32] = "";
    if (final)
        duration(eta, sizeof(eta), el);
    else if (frac > 0.001 && el > 1)
        duration(eta, sizeof(eta), el * (1 - frac) / frac);
    char skip[48] = "";
    if (skipped)
        snprintf(skip, sizeof(skip), "  %lld skipped", (long long)skipped);
    /* \033[K: clear what a longer line drawn before left */
    fprintf(stderr, "\rcod-prep %-5s [%s] %3d%%  %.1f/%.1f MB  %.1f MB/s  %lld docs%s  %s%s\033[K", p->label, bar,
            (int)(frac * 100), (double)stored / 1e6, (double)p->total / 1e6,
            el > 0 ? (double)text / 1e6 / el : 0.0, (long long)docs, skip, final ? "in " : eta[0] ? "ETA " : "",
            eta);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}
