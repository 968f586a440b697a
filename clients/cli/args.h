/* Command-line words: a table of options per command, `--opt V` or
 * `--opt=V`, positionals gathered in order, `--` ends the options. */
#ifndef COD_CLI_ARGS_H
#define COD_CLI_ARGS_H

#include <stddef.h>

#include "clients/cli/cli.h"

enum opt_kind {
    OPT_FLAG,  /* int, set to 1 */
    OPT_STR,   /* const char * */
    OPT_LONG,  /* long, a whole number >= 0 */
    OPT_NUM,   /* double, finite and > 0 */
    OPT_LIST,  /* struct strlist: each value appended */
    OPT_PAIRS, /* struct strlist: the option's name, then its value, kept in order */
};

struct opt {
    const char *name; /* "--state", or "-f" */
    enum opt_kind kind;
    void *dst;
};

struct strlist {
    const char **v;
    int n, cap;
};

int strlist_push(struct strlist *l, const char *s);
void strlist_free(struct strlist *l);

/* The options every command takes, wherever they stand on the line. */
#define OPTS_COMMON(c)                                                                           \
    {"--json", OPT_FLAG, &(c)->json}, {"--server", OPT_STR, &(c)->server},                       \
        {"--token", OPT_STR, &(c)->token}, {"--timeout", OPT_NUM, &(c)->timeout_s}

/* Reads argv against opts (ended by a {NULL} entry). The positionals are
 * moved to argv[0..*npos), in order. Returns ARGS_GO to carry on, else the
 * exit code the command should return: EXIT_OK after printing usage for
 * --help, EXIT_USAGE after saying what is wrong (including a count of
 * positionals outside [min_pos, max_pos]; max_pos < 0 for no limit). */
enum { ARGS_GO = -1 };
int cli_args(struct cli *c, int argc, char **argv, const struct opt *opts, int *npos,
             const char *usage, int min_pos, int max_pos);

#endif
