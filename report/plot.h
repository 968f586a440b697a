/* Figures as inline SVG for the sweep report: line charts (linear or log y,
 * error bars, a legend) and heat maps. Each <svg> carries what a reader or
 * a test can check without looking at the drawing: data-figure (its name),
 * data-series (lines drawn, or heat-map rows) and data-points (points
 * drawn). Nothing is loaded from anywhere: the SVG is the figure. */
#ifndef COD_REPORT_PLOT_H
#define COD_REPORT_PLOT_H

#include <stdio.h>

struct plot_series {
    const char *label, *color;
    int n;
    const double *x, *y;
    const double *err;  /* ± around y, or NULL; NaN where there is none */
};

struct plot {
    const char *figure;           /* data-figure */
    const char *title, *xlabel, *ylabel;
    int log_y;                    /* values ≤ 0 are gaps on a log axis */
    int n_series;
    const struct plot_series *series;
};

/* The chart into f. -1 when f failed. */
int plot_lines(FILE *f, const struct plot *p);

struct heatmap {
    const char *figure, *title, *xlabel, *ylabel;
    int rows, cols;
    const double *v;              /* rows × cols, row-major; NaN: no value */
    int row0, col0;               /* the label of row 0 and of column 0 */
    const char *scale_label;      /* what the colours mean */
};

/* Colours from the smallest to the largest value of each row (the paper's
 * row-scaled angular distances). -1 when f failed. */
int plot_heatmap(FILE *f, const struct heatmap *h);

#endif
