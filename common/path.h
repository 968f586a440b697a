/* Paths built into fixed buffers. A path that does not fit is an error that
 * names it, never a silently shortened name that would open, write or
 * remove another file. */
#ifndef COD_PATH_H
#define COD_PATH_H

#include <stddef.h>

/* Formats into out (cap bytes). 0, or -1 with err = "path too long: ...". */
int path_fmt(char *out, size_t cap, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* path_fmt(out, cap, err, errlen, "%s", src). */
int path_copy(char *out, size_t cap, const char *src, char *err, size_t errlen);

#endif
