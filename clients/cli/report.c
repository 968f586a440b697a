/* cod report: a sweep's report (the paper's Table 1 and figures, as
 * cod-server renders it from its own answers) written into a folder: one
 * self-contained HTML file and the CSV data of each table and figure. */
#include <stdio.h>
#include <string.h>

#include "clients/cli/args.h"
#include "common/fileio.h"
#include "common/path.h"

static const char report_usage[] =
    "usage: cod report --sweep ID [--out DIR] [--json]\n"
    "Writes the sweep's report into DIR (default report-sweep-ID, made if\n"
    "missing): report.html, one self-contained file (inline SVG: it opens\n"
    "anywhere, needs no network, can be mailed), and beside it the CSV data of\n"
    "every table and figure: Table 1 (final eval perplexity, mean ± sd over\n"
    "the seeds, diverged runs counted apart), the paired comparisons, the\n"
    "depth summary, layer/out_var and layer/grad_norm by layer, the learning\n"
    "curves, the performance drop of each removed layer and the angular\n"
    "distances. Prints each file's path (--json: {\"dir\", \"files\"}).\n";

int cmd_report(struct cli *c, int argc, char **argv)
{
    long sweep = 0;
    const char *out = NULL;
    int npos;
    const struct opt opts[] = {OPTS_COMMON(c), {"--sweep", OPT_LONG, &sweep}, {"--out", OPT_STR, &out}, {0}};
    int rc = cli_args(c, argc, argv, opts, &npos, report_usage, 0, 0);
    if (rc != ARGS_GO)
        return rc;
    if (sweep <= 0)
        return fail(c, EXIT_USAGE, "--sweep ID is required (a positive sweep id)");
    char dir[4096], path[4200], err[4400];
    if (out ? path_copy(dir, sizeof dir, out, err, sizeof err)
            : path_fmt(dir, sizeof dir, err, sizeof err, "report-sweep-%ld", sweep))
        return fail(c, EXIT_USAGE, "%s", err);
    json_t *rep, *f;
    snprintf(path, sizeof path, "/v1/sweeps/%ld/report", sweep);
    if ((rc = api_call(c, "GET", path, NULL, 0, &rep)))
        return rc;
    json_t *written = json_array();
    size_t i;
    if (!written)
        rc = fail(c, EXIT_REFUSED, "out of memory");
    else if (fio_mkdir_p(dir, err, sizeof err))
        rc = fail(c, EXIT_USAGE, "%s", err);
    json_array_foreach(json_object_get(rep, "files"), i, f) {
        if (rc)
            break;
        const char *name = json_string_value(json_object_get(f, "name"));
        const json_t *content = json_object_get(f, "content");
        /* the server names plain files; anything else would write outside DIR */
        if (!name || !*name || strchr(name, '/') || name[0] == '.' || !json_is_string(content)) {
            rc = fail(c, EXIT_REFUSED, "the server's report holds a file this client will not write");
            break;
        }
        if (path_fmt(path, sizeof path, err, sizeof err, "%s/%s", dir, name) ||
            fio_write_text(path, json_string_value(content), json_string_length(content), err, sizeof err)) {
            rc = fail(c, EXIT_USAGE, "%s", err);
            break;
        }
        json_array_append_new(written, json_string(path));
        if (!c->json)
            printf("%s\n", path);
    }
    if (!rc && c->json) {
        json_t *o = json_pack("{s:s,s:O}", "dir", dir, "files", written);
        rc = o ? print_json(c, o) : fail(c, EXIT_REFUSED, "out of memory");
        json_decref(o);
    }
    json_decref(written);
    json_decref(rep);
    return rc;
}
