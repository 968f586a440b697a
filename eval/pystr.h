/* Python's string semantics where the harness's prompts depend on them:
 * what str.isspace() calls whitespace (str.strip and rstrip, and the
 * trailing whitespace a context hands to its continuation), len() in code
 * points (acc_norm's lengths), str.capitalize(), and HellaSwag's
 * preprocess(). Every string is valid UTF-8 (jansson's). */
#ifndef COD_EVAL_PYSTR_H
#define COD_EVAL_PYSTR_H

#include <stddef.h>
#include <stdint.h>

/* Python's str.isspace() of one code point. */
int py_isspace(uint32_t cp);
/* len(s): code points. */
size_t py_len(const char *s, size_t n);
/* Bytes of s left after s.rstrip(); after s.lstrip() it starts at *lead. */
size_t py_rstrip_len(const char *s, size_t n);
size_t py_lstrip_at(const char *s, size_t n);
/* s.strip(), s.capitalize() (the first code point title-cased, the rest
 * lower-cased, by ICU's full mappings), HellaSwag's preprocess(): strip,
 * " [title]" to ". ", every "[…]" without a newline inside removed (the
 * regex \[.*?\]), then every "  " made " " (left to right, as str.replace).
 * Each returns a malloc'ed string, NULL when out of memory. */
char *py_strip(const char *s);
char *py_capitalize(const char *s);
char *hellaswag_preprocess(const char *s);

#endif
