#include "report/plot.h"

#include <math.h>
#include <string.h>

#include "report/text.h"

/* The chart's geometry, in SVG user units: the plot area and a legend on
 * its right. */
enum { W = 560, H = 320, LEFT = 70, RIGHT_LEGEND = 130, TOP = 34, BOTTOM = 48 };
#define PLOT_W (W - LEFT - RIGHT_LEGEND)
#define PLOT_H (H - TOP - BOTTOM)

struct axis {
    double lo, hi;  /* the data range shown (log10 of it on a log axis) */
    int log;
    double ticks[32];
    int n_ticks;
};

/* 1, 2 or 5 × 10^k, the smallest at least x */
static double nice_step(double x)
{
    double p = pow(10, floor(log10(x))), m = x / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void linear_ticks(struct axis *a, double lo, double hi, int integer)
{
    double step = nice_step((hi - lo) / 5);
    if (integer && step < 1)
        step = 1;
    a->n_ticks = 0;
    for (double t = ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9 && a->n_ticks < 32; t += step)
        a->ticks[a->n_ticks++] = fabs(t) < step * 1e-9 ? 0 : t;
}

/* An axis over [lo, hi] (finite, lo ≤ hi; on a log axis both > 0). */
static void axis_make(struct axis *a, double lo, double hi, int log_scale, int integer)
{
    a->log = log_scale;
    if (log_scale) {
        lo = log10(lo);
        hi = log10(hi);
        double pad = hi - lo < 1e-9 ? 0.5 : (hi - lo) * 0.05;
        a->lo = lo - pad;
        a->hi = hi + pad;
        a->n_ticks = 0;
        /* powers of ten, with 2 and 5 between them when the range spans few */
        static const double mult[3] = {1, 2, 5};
        int dense = a->hi - a->lo < 2.5;
        for (int k = (int)floor(a->lo); k <= (int)ceil(a->hi) && a->n_ticks < 32; k++)
            for (int m = 0; m < (dense ? 3 : 1); m++) {
                double t = log10(mult[m]) + k;
                if (t >= a->lo && t <= a->hi && a->n_ticks < 32)
                    a->ticks[a->n_ticks++] = t;
            }
        return;
    }
    double pad = hi - lo < 1e-12 ? (fabs(lo) > 0 ? fabs(lo) * 0.1 : 1) : (hi - lo) * 0.05;
    a->lo = integer ? lo : lo - pad;
    a->hi = integer ? hi : hi + pad;
    if (a->hi - a->lo < 1e-12) {
        a->lo -= pad;
        a->hi += pad;
    }
    linear_ticks(a, a->lo, a->hi, integer);
}

/* value → position in [0, 1] along the axis */
static double axis_pos(const struct axis *a, double v)
{
    if (a->log)
        v = log10(v);
    return (v - a->lo) / (a->hi - a->lo);
}

static void tick_label(FILE *f, const struct axis *a, double t)
{
    double v = a->log ? pow(10, t) : t;
    if (a->log)
        v = round(v / pow(10, floor(t + 1e-9))) * pow(10, floor(t + 1e-9));
    if (v != 0 && (fabs(v) >= 1e5 || fabs(v) < 1e-3))
        fprintf(f, "%.0e", v);
    else
        fprintf(f, "%g", v);
}

static double px_x(const struct axis *a, double v) { return LEFT + axis_pos(a, v) * PLOT_W; }
static double px_y(const struct axis *a, double v) { return TOP + (1 - axis_pos(a, v)) * PLOT_H; }

/* The width a title may take, from the plot's left edge to the panel's. */
#define TITLE_W (W - LEFT - 6)

/* Helvetica's mean advance is about 0.58 of the font size over the
 * letters, digits and punctuation of a title: close enough to tell one
 * that would run past the panel. */
static double text_width(const char *s, double size)
{
    long chars = 0;
    for (; *s; s++)
        chars += ((unsigned char)*s & 0xC0) != 0x80;
    return 0.58 * size * (double)chars;
}

/* One line of the title: s[0..n) at height y, pressed into TITLE_W
 * (textLength) should it still be wider. */
static void title_line(FILE *f, const char *s, size_t n, int y, int size, const char *weight)
{
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), s);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"%s\"", LEFT, y, size, weight);
    if (text_width(line, size) > TITLE_W)
        fprintf(f, " textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\"", TITLE_W);
    fputc('>', f);
    text_html(f, line);
    fputs("</text>\n", f);
}

static void frame(FILE *f, const char *figure, const char *title, int series, long points)
{
    fprintf(f, "<svg class=\"figure\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
               " viewBox=\"0 0 %d %d\" data-figure=\"", W, H, W, H);
    text_html(f, figure);
    fprintf(f, "\" data-series=\"%d\" data-points=\"%ld\" font-family=\"Helvetica, Arial, sans-serif\""
               " font-size=\"11\">\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n",
            series, points, W, H);
    /* the figure's own title, then the setting after its last " — " on a
     * second line when the two would not fit on one */
    const char *dash = NULL;
    for (const char *p = strstr(title, " — "); p; p = strstr(p + 1, " — "))
        dash = p;
    if (!dash || text_width(title, 13) <= TITLE_W) {
        title_line(f, title, strlen(title), 18, 13, "bold");
        return;
    }
    title_line(f, title, (size_t)(dash - title), 14, 13, "bold");
    const char *rest = dash + strlen(" — ");
    title_line(f, rest, strlen(rest), 28, 11, "normal");
}

static void axes(FILE *f, const struct axis *x, const struct axis *y, const char *xlabel,
                 const char *ylabel)
{
    fprintf(f, "<g stroke=\"#ddd\">\n");
    for (int i = 0; i < y->n_ticks; i++) {
        double py = TOP + (1 - (y->ticks[i] - y->lo) / (y->hi - y->lo)) * PLOT_H;
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", LEFT, LEFT + PLOT_W, py, py);
    }
    fprintf(f, "</g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n",
            LEFT, TOP, PLOT_W, PLOT_H);
    for (int i = 0; i < y->n_ticks; i++) {
        double py = TOP + (1 - (y->ticks[i] - y->lo) / (y->hi - y->lo)) * PLOT_H;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LEFT - 5, py + 4);
        tick_label(f, y, y->ticks[i]);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < x->n_ticks; i++) {
        double px = LEFT + (x->ticks[i] - x->lo) / (x->hi - x->lo) * PLOT_W;
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#333\"/>", px, px,
                TOP + PLOT_H, TOP + PLOT_H + 4);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", px, TOP + PLOT_H + 16);
        tick_label(f, x, x->ticks[i]);
        fputs("</text>\n", f);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", LEFT + PLOT_W / 2, H - 10);
    text_html(f, xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">",
            TOP + PLOT_H / 2);
    text_html(f, ylabel);
    fputs("</text>\n", f);
}

static int usable(const struct plot *p, double y)
{
    return isfinite(y) && (!p->log_y || y > 0);
}

int plot_lines(FILE *f, const struct plot *p)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    long points = 0;
    int integer = 1;
    for (int s = 0; s < p->n_series; s++)
        for (int i = 0; i < p->series[s].n; i++) {
            const struct plot_series *ps = &p->series[s];
            if (!usable(p, ps->y[i]) || !isfinite(ps->x[i]))
                continue;
            points++;
            integer &= ps->x[i] == floor(ps->x[i]);
            xlo = fmin(xlo, ps->x[i]);
            xhi = fmax(xhi, ps->x[i]);
            double e = ps->err && isfinite(ps->err[i]) ? ps->err[i] : 0;
            double lo = ps->y[i] - e;
            ylo = fmin(ylo, usable(p, lo) ? lo : ps->y[i]);
            yhi = fmax(yhi, ps->y[i] + e);
        }
    frame(f, p->figure, p->title, p->n_series, points);
    if (!points) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#888\">no values recorded</text>\n", LEFT + 20,
                TOP + PLOT_H / 2);
        fputs("</svg>\n", f);
        return ferror(f) ? -1 : 0;
    }
    struct axis x, y;
    axis_make(&x, xlo, xhi, 0, integer);
    axis_make(&y, ylo, yhi, p->log_y, 0);
    axes(f, &x, &y, p->xlabel, p->ylabel);
    for (int s = 0; s < p->n_series; s++) {
        const struct plot_series *ps = &p->series[s];
        int markers = ps->n <= 64;
        fprintf(f, "<g class=\"series\" data-label=\"");
        text_html(f, ps->label);
        fprintf(f, "\" stroke=\"%s\" fill=\"%s\">\n<polyline fill=\"none\" stroke-width=\"1.6\" points=\"",
                ps->color, ps->color);
        /* a gap (a value not shown) ends the line and starts another */
        int open = 1;
        for (int i = 0; i < ps->n; i++) {
            if (!usable(p, ps->y[i])) {
                if (open != 1)
                    fputs("\"/>\n<polyline fill=\"none\" stroke-width=\"1.6\" points=\"", f);
                open = 1;
                continue;
            }
            fprintf(f, "%s%.1f,%.1f", open ? "" : " ", px_x(&x, ps->x[i]), px_y(&y, ps->y[i]));
            open = 0;
        }
        fputs("\"/>\n", f);
        for (int i = 0; i < ps->n; i++) {
            if (!usable(p, ps->y[i]))
                continue;
            double px = px_x(&x, ps->x[i]), py = px_y(&y, ps->y[i]);
            double e = ps->err ? ps->err[i] : NAN;
            if (isfinite(e) && e > 0) {
                double top = px_y(&y, ps->y[i] + e);
                double bot = usable(p, ps->y[i] - e) ? px_y(&y, ps->y[i] - e) : TOP + PLOT_H;
                fprintf(f, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6\" stroke-width=\"1\"/>\n",
                        px, top, bot, px - 3, top, px - 3, bot);
            }
            if (markers)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>\n", px, py);
        }
        fputs("</g>\n", f);
        double ly = TOP + 8 + s * 16;
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>",
                W - RIGHT_LEGEND + 10, W - RIGHT_LEGEND + 28, ly, ly, ps->color);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">", W - RIGHT_LEGEND + 32, ly + 4);
        text_html(f, ps->label);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

/* A perceptually ordered ramp (viridis' ends and middle) at t in [0, 1]. */
static void ramp(double t, int rgb[3])
{
    static const int stops[5][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double u = t * 4;
    int i = u >= 4 ? 3 : (int)u;
    double w = u - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)lround(stops[i][c] * (1 - w) + stops[i + 1][c] * w);
}

int plot_heatmap(FILE *f, const struct heatmap *h)
{
    long points = 0;
    for (int i = 0; i < h->rows * h->cols; i++)
        points += isfinite(h->v[i]);
    frame(f, h->figure, h->title, h->rows, points);
    int side = PLOT_W < PLOT_H ? PLOT_W : PLOT_H;
    double cw = (double)side / (h->cols ? h->cols : 1), ch = (double)side / (h->rows ? h->rows : 1);
    for (int r = 0; r < h->rows; r++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int c = 0; c < h->cols; c++) {
            double v = h->v[(size_t)r * h->cols + c];
            if (isfinite(v)) {
                lo = fmin(lo, v);
                hi = fmax(hi, v);
            }
        }
        for (int c = 0; c < h->cols; c++) {
            double v = h->v[(size_t)r * h->cols + c];
            if (!isfinite(v))
                continue;
            int rgb[3];
            ramp(hi > lo ? (v - lo) / (hi - lo) : 0.5, rgb);
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#%02x%02x%02x\">"
                       "<title>%d, %d: %.4g</title></rect>\n",
                    LEFT + c * cw, TOP + r * ch, cw + 0.3, ch + 0.3, rgb[0], rgb[1], rgb[2],
                    h->row0 + r, h->col0 + c, v);
        }
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n",
            LEFT, TOP, side, side);
    /* about six labels along each side */
    int rstep = h->rows > 6 ? (h->rows + 5) / 6 : 1, cstep = h->cols > 6 ? (h->cols + 5) / 6 : 1;
    for (int r = 0; r < h->rows; r += rstep)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d</text>\n", LEFT - 5,
                TOP + (r + 0.5) * ch + 4, h->row0 + r);
    for (int c = 0; c < h->cols; c += cstep)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n",
                LEFT + (c + 0.5) * cw, TOP + side + 16, h->col0 + c);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", LEFT + side / 2, TOP + side + 34);
    text_html(f, h->xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">",
            TOP + side / 2);
    text_html(f, h->ylabel);
    fputs("</text>\n", f);
    /* the colour scale */
    int bx = LEFT + side + 24;
    for (int i = 0; i < 20; i++) {
        int rgb[3];
        ramp(1 - i / 19.0, rgb);
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"14\" height=\"%.1f\" fill=\"#%02x%02x%02x\"/>", bx,
                TOP + i * side / 20.0, side / 20.0 + 0.3, rgb[0], rgb[1], rgb[2]);
    }
    fprintf(f, "\n<text x=\"%d\" y=\"%d\">max</text><text x=\"%d\" y=\"%d\">min</text>\n", bx + 18,
            TOP + 9, bx + 18, TOP + side);
    fprintf(f, "<text transform=\"translate(%d %d) rotate(90)\" text-anchor=\"middle\">", bx + 52,
            TOP + side / 2);
    text_html(f, h->scale_label);
    fputs("</text>\n</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
