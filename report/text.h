/* Text for the report's files: HTML-escaped strings and numbers, CSV
 * fields, and the two number formats: exact (%.17g: a CSV value reads back
 * as the very double the API sent) and short (for people). */
#ifndef COD_REPORT_TEXT_H
#define COD_REPORT_TEXT_H

#include <stdio.h>

#include <jansson.h>

/* s with & < > " escaped, for HTML and SVG text and attributes. */
void text_html(FILE *f, const char *s);
/* One CSV field: quoted when it holds a comma, a quote or a line break. */
void text_csv(FILE *f, const char *s);
/* A JSON value as a CSV field: numbers exactly, strings as they are,
 * null as an empty field. */
void text_csv_json(FILE *f, const json_t *v);
/* A number with 4 significant digits ("–" when it is not finite). */
void text_short(FILE *f, double x);
/* A JSON value as a person reads it: strings as they are, numbers %g. */
void text_value(char *buf, size_t n, const json_t *v);

#endif
