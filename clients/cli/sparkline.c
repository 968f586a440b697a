/* Sparklines and progress bars (see sparkline.h). */
#include "clients/cli/sparkline.h"

#include <math.h>
#include <string.h>

static const char *const ticks[8] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

/* Appends glyph g to out if it fits; the callers size out for width glyphs. */
static void put(char *out, size_t outlen, size_t *len, const char *g)
{
    size_t gl = strlen(g);
    if (*len + gl + 1 > outlen)
        return;
    memcpy(out + *len, g, gl);
    *len += gl;
    out[*len] = 0;
}

void sparkline(const double *v, int n, int width, char *out, size_t outlen)
{
    size_t len = 0;
    if (outlen)
        out[0] = 0;
    if (n <= 0 || width <= 0)
        return;
    int cells = n < width ? n : width;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
    for (int c = 0; c < cells; c++) {
        int a = (int)((long)c * n / cells), b = (int)((long)(c + 1) * n / cells);
        double sum = 0;
        int k = 0;
        for (int i = a; i < b; i++)
            if (!isnan(v[i])) {
                sum += v[i];
                k++;
            }
        if (!k) {
            put(out, outlen, &len, " ");
            continue;
        }
        /* A flat curve sits mid-height rather than on the floor. */
        double x = hi > lo ? (sum / k - lo) / (hi - lo) : 0.5;
        int t = (int)lrint(x * 7);
        put(out, outlen, &len, ticks[t < 0 ? 0 : t > 7 ? 7 : t]);
    }
}

void progress_bar(double frac, int width, char *out, size_t outlen)
{
    size_t len = 0;
    if (outlen)
        out[0] = 0;
    if (!(frac >= 0))
        frac = 0;
    int full = (int)floor(fmin(frac, 1.0) * width);
    for (int i = 0; i < width; i++)
        put(out, outlen, &len, i < full ? "█" : "░");
}
