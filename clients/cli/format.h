/* Values from the server's JSON as short human text. */
#ifndef COD_CLI_FORMAT_H
#define COD_CLI_FORMAT_H

#include <jansson.h>
#include <stddef.h>

/* A scalar: "-" for null or missing, integers as they are, reals to four
 * significant digits, strings unquoted, anything else as compact JSON.
 * Returns buf. */
const char *fmt_value(const json_t *v, char *buf, size_t n);
/* Seconds as "42s", "12m30s", "3h05m", "2d04h". Returns buf. */
const char *fmt_duration(double s, char *buf, size_t n);
/* A Unix time (JSON number) as local "YYYY-MM-DD HH:MM:SS", "-" for null. */
const char *fmt_time(const json_t *v, char *buf, size_t n);

/* Text others wrote (names, log lines, reasons) as it may reach a
 * terminal: every control character, C0 (but tab), DEL and C1, written as
 * \xHH or \u00HH, so that none can move the cursor, retitle the window or
 * clear the screen. text_escape writes into out (n bytes, cut to fit) and
 * returns it; text_safe returns one of a few buffers of its own, which the
 * eighth call after reuses ("?" when out of memory). */
const char *text_escape(const char *s, char *out, size_t n);
const char *text_safe(const char *s);

/* How many columns s takes on a terminal: its UTF-8 code points. */
int text_width(const char *s);

#endif
