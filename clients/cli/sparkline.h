/* Numbers drawn as text: a loss curve as a sparkline, progress as a bar. */
#ifndef COD_CLI_SPARKLINE_H
#define COD_CLI_SPARKLINE_H

#include <stddef.h>

/* v[0..n) squeezed into at most width glyphs (▁..█), each the mean of its
 * share of the points; NaN marks a missing value and a glyph with only
 * those is a space. out needs 3*width+1 bytes. */
void sparkline(const double *v, int n, int width, char *out, size_t outlen);

/* frac in [0, 1] as width glyphs of █ then ░; out needs 3*width+1 bytes. */
void progress_bar(double frac, int width, char *out, size_t outlen);

#endif
