/* What a cod-prep run leaves in OUT (see prep_run.h): sources.txt and
 * meta.json written into the staging directory, then the shards and those
 * two moved into place, meta.json last, replacing a previous run's. */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/path.h"
#include "prep/run_state.h"
#include "text/sha256.h"

static json_t *split_json(const struct run *r, int split)
{
    json_t *names = json_array();
    for (int i = 0; i < r->sink[split].shards; i++) {
        char n[64];
        snprintf(n, sizeof(n), "%s_%06d.bin", prep_split_name(split), i);
        json_array_append_new(names, json_string(n));
    }
    const struct prep_split_result *s = &r->res->split[split];
    return json_pack("{s:I, s:I, s:I, s:o}", "documents", (json_int_t)s->documents, "bytes", (json_int_t)s->bytes,
                     "tokens", (json_int_t)s->tokens, "shards", names);
}

/* sources.txt: what each input was, so that a set of shards can be traced to
 * its files: a line per file and split it gave documents to (a line with
 * split "-" for a file that gave none). */
static int write_sources(struct run *r, char src_sha[65], char *err, size_t errlen)
{
    size_t cap = 256, n = 0;
    for (size_t i = 0; i < r->in.n; i++)
        cap += 2 * (strlen(r->in.v[i].path) + 128);
    char *src = malloc(cap);
    if (!src) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* the training inputs first, though the held-out ones were read first */
    for (size_t k = 0; k < 2 * r->in.n; k++) {
        size_t i = k % r->in.n;
        if ((k < r->in.n) == (r->in.v[i].split == VAL))
            continue;
        const struct file_stat *f = &r->files[i];
        int lines = 0;
        for (int s = 0; s < 2; s++)
            if (f->docs[s] || (s == 1 && !lines)) {
                int none = !f->docs[s];
                n += (size_t)snprintf(src + n, cap - n, "%s %12lld %10lld %-5s %s\n", f->sha,
                                      (long long)f->bytes[s], (long long)f->tokens[s],
                                      none ? "-" : prep_split_name(s), r->in.v[i].path);
                lines++;
            }
    }
    char path[4200];
    int rc = sha256_hex(src, n, src_sha);
    if (rc != 0)
        snprintf(err, errlen, "cannot compute the sha256 of sources.txt (libcrypto failed)");
    else
        rc = path_fmt(path, sizeof(path), err, errlen, "%s/sources.txt", r->stage);
    if (rc == 0)
        rc = fio_write_text(path, src, n, err, errlen);
    free(src);
    return rc;
}

static json_t *input_json(const struct run *r)
{
    const struct prep_result *res = r->res;
    json_t *skipped = json_object();
    for (int k = JL_OK + 1; k < JL_KINDS; k++)
        json_object_set_new(skipped, jl_fault_name(k), json_integer(res->skipped[k]));
    json_t *j = json_pack("{s:I, s:I, s:o, s:I}", "files", (json_int_t)r->in.n, "documents_read",
                          (json_int_t)res->read, "lines_skipped", skipped, "duplicates",
                          (json_int_t)res->duplicates);
    if (j && r->o->n_val_inputs == 0)
        json_object_set_new(j, "val_fraction", json_real(r->o->val_fraction));
    if (j && r->o->split_tokens > 0) {
        json_object_set_new(j, "split_paragraphs", json_integer(r->o->split_tokens));
        json_object_set_new(j, "documents_cut", json_integer(res->cut));
    }
    if (j)
        json_object_set_new(j, "text_key", json_string(r->key.spec));
    if (j && res->parquet_files)
        json_object_set_new(j, "parquet",
                            json_pack("{s:I, s:I, s:I, s:[s]}", "files", (json_int_t)res->parquet_files,
                                      "row_groups", (json_int_t)res->parquet_groups, "rows",
                                      (json_int_t)res->parquet_rows, "columns_read", r->key.spec));
    return j;
}

int publish_meta(struct run *r, char *err, size_t errlen)
{
    char src_sha[65], path[4200];
    if (write_sources(r, src_sha, err, errlen) != 0)
        return -1;
    json_t *files = json_object();
    char *fl = strdup(tokenizer_files(r->tok));
    if (!fl || !files) {
        free(fl);
        json_decref(files);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (char *save = NULL, *line = strtok_r(fl, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (sp) {
            *sp = 0;
            json_object_set_new(files, line, json_string(sp + 1));
        }
    }
    free(fl);
    json_t *meta = json_pack("{s:s, s:i, s:i, s:s}", "tokenizer", tokenizer_name(r->tok), "vocab_size",
                             (int)tokenizer_vocab_size(r->tok), "doc_token", (int)tokenizer_doc_token(r->tok),
                             "doc_token_at", tokenizer_doc_token_at(r->tok) == TOK_DOC_END ? "end" : "start");
    if (meta && tokenizer_pad_token(r->tok) >= 0)
        json_object_set_new(meta, "pad_token", json_integer(tokenizer_pad_token(r->tok)));
    json_t *rest = json_pack("{s:i, s:I, s:o, s:o, s:o, s:o, s:s, s:s}", "token_bytes", r->token_bytes,
                             "shard_tokens", (json_int_t)r->o->shard_tokens, "tokenizer_files", files, "input",
                             input_json(r), "train", split_json(r, TRAIN), "val", split_json(r, VAL), "sources",
                             "sources.txt", "sources_sha256", src_sha);
    if (meta && rest)
        json_object_update(meta, rest);
    json_decref(rest);
    /* A trailing newline, as a text file should end. */
    char *text = meta ? json_dumps(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(meta);
    char *withnl = text ? malloc(strlen(text) + 2) : NULL;
    if (!withnl) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int len = sprintf(withnl, "%s\n", text);
    free(text);
    int rc = path_fmt(path, sizeof(path), err, errlen, "%s/meta.json", r->stage);
    if (rc == 0)
        rc = fio_write_text(path, withnl, (size_t)len, err, errlen);
    free(withnl);
    return rc;
}

void publish_remove_stage(const char *stage)
{
    DIR *d = opendir(stage);
    if (!d)
        return;
    struct dirent *e;
    char p[4400];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (path_fmt(p, sizeof(p), NULL, 0, "%s/%s", stage, e->d_name) == 0)
                unlink(p);
        }
    closedir(d);
    rmdir(stage);
}

/* Old shards go first (a run with fewer shards must not leave extras
 * behind), meta.json arrives last: a reader that sees meta.json sees the
 * shards it lists. */
int publish_commit(struct run *r, char *err, size_t errlen)
{
    const char *out = r->o->out_dir;
    const char *const old[] = {"meta.json", "sources.txt", "train_*.bin", "val_*.bin"};
    for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
        char pat[4200];
        glob_t g;
        if (path_fmt(pat, sizeof(pat), err, errlen, "%s/%s", out, old[i]) != 0)
            return -1;
        if (glob(pat, 0, NULL, &g) == 0)
            for (size_t k = 0; k < g.gl_pathc; k++)
                if (unlink(g.gl_pathv[k]) != 0 && errno != ENOENT) {
                    snprintf(err, errlen, "%s: cannot remove: %s", g.gl_pathv[k], strerror(errno));
                    globfree(&g);
                    return -1;
                }
        globfree(&g);
    }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < r->sink[s].shards; i++) {
            char a[4200], b[4200];
            if (path_fmt(a, sizeof(a), err, errlen, "%s/%s_%06d.bin", r->stage, prep_split_name(s), i) ||
                path_fmt(b, sizeof(b), err, errlen, "%s/%s_%06d.bin", out, prep_split_name(s), i))
                return -1;
            if (rename(a, b) != 0) {
                snprintf(err, errlen, "%s: cannot move into place: %s", b, strerror(errno));
                return -1;
            }
        }
    const char *last[] = {"sources.txt", "meta.json"};
    for (int i = 0; i < 2; i++) {
        char a[4200], b[4200];
        if (path_fmt(a, sizeof(a), err, errlen, "%s/%s", r->stage, last[i]) ||
            path_fmt(b, sizeof(b), err, errlen, "%s/%s", out, last[i]))
            return -1;
        if (rename(a, b) != 0) {
            snprintf(err, errlen, "%s: cannot move into place: %s", b, strerror(errno));
            return -1;
        }
    }
    if (fio_fsync_path(out) != 0) {
        snprintf(err, errlen, "%s: fsync: %s", out, strerror(errno));
        return -1;
    }
    return 0;
}
