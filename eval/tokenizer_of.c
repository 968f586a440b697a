#include "eval/tokenizer_of.h"

#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>


/* Every file meta.json records is one the tokenizer read, with its sha256. */
static int same_files(const struct tokenizer *tok, json_t *files, const char *meta, char *err,
                      size_t errlen)
{
    const char *name;
    json_t *sha;
    const char *read = tokenizer_files(tok);
    json_object_foreach(files, name, sha)
    {
        char line[600];
        snprintf(line, sizeof line, "%s %s", name, json_string_value(sha) ? json_string_value(sha) : "");
        const char *at = strstr(read, line);
        size_t n = strlen(line);
        if (!at || (at != read && at[-1] != '\n') || (at[n] && at[n] != '\n')) {
            snprintf(err, errlen, "%s: the data was made with %s (sha256 %s), which the tokenizer "
                                  "read is not (%s)",
                     meta, name, json_string_value(sha) ? json_string_value(sha) : "?", read);
            return -1;
        }
    }
    return 0;
}

int eval_tokenizer_of_data(const char *pattern, const char *dir, const char *file,
                           struct eval_tokenizer *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        snprintf(err, errlen, "%s: no file matches, so no meta.json names the tokenizer", pattern);
        return -1;
    }
    char first[PATH_MAX], shard_dir[PATH_MAX], meta_path[PATH_MAX + 16],
        model_path[PATH_MAX + 300];
    snprintf(first, sizeof first, "%s", g.gl_pathv[0]);
    globfree(&g);
    snprintf(shard_dir, sizeof shard_dir, "%s", dirname(first));
    snprintf(meta_path, sizeof meta_path, "%s/meta.json", shard_dir);
    json_error_t je;
    json_t *meta = json_load_file(meta_path, 0, &je);
    if (!meta) {
        snprintf(err, errlen, "%s: %s (the data's tokenizer is named there)", meta_path, je.text);
        return -1;
    }
    const char *name = json_string_value(json_object_get(meta, "tokenizer"));
    json_t *files = json_object_get(meta, "tokenizer_files"), *doc = json_object_get(meta, "doc_token");
    const char *at = json_string_value(json_object_get(meta, "doc_token_at"));
    int rc = -1;
    if (!name || !json_is_object(files) || !json_is_integer(doc)) {
        snprintf(err, errlen, "%s: no \"tokenizer\", \"tokenizer_files\" and \"doc_token\" "
                              "(cod-prep writes them)",
                 meta_path);
        goto out;
    }
    int own_file = !strcmp(name, "hf") || !strcmp(name, "sentencepiece");
    if (own_file && !file) {
        const char *recorded = NULL;
        json_t *v;
        json_object_foreach(files, recorded, v) break;
        snprintf(model_path, sizeof model_path, "%s/%s", shard_dir, recorded ? recorded : "?");
        if (!recorded || access(model_path, R_OK) != 0) {
            snprintf(err, errlen, "%s: the data was tokenized with %s's %s, which is not beside "
                                  "it: --tokenizer FILE",
                     meta_path, name, recorded ? recorded : "file");
            goto out;
        }
        file = model_path;
    }
    if (!strcmp(name, "sentencepiece"))
        t->tok = tokenizer_open_model(file, 0, err, errlen);
    else if (!strcmp(name, "hf"))
        t->tok = tokenizer_open("hf", file, 0, err, errlen);
    else if (dir)
        t->tok = tokenizer_open(name, dir, 0, err, errlen);
    else if (!(t->tok = tokenizer_open(name, shard_dir, 0, err, errlen)))
        t->tok = tokenizer_open(name, NULL, 0, err, errlen); /* TOK_DEFAULT_DIR */
    if (!t->tok || same_files(t->tok, files, meta_path, err, errlen))
        goto out;
    t->doc = (uint32_t)json_integer_value(doc);
    t->bos = !at || !strcmp(at, "start");
    snprintf(t->what, sizeof t->what, "%s (%s)", name, meta_path);
    rc = 0;
out:
    if (rc && t->tok) {
        tokenizer_close(t->tok);
        t->tok = NULL;
    }
    json_decref(meta);
    return rc;
}

int eval_tokenizer_of_folder(const char *dir, struct eval_tokenizer *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (access(path, R_OK) == 0) {
        t->tok = tokenizer_open("hf", path, 0, err, errlen);
    } else {
        snprintf(path, sizeof path, "%s/tokenizer.model", dir);
        if (access(path, R_OK) != 0) {
            snprintf(err, errlen, "%s holds neither tokenizer.json nor tokenizer.model", dir);
            return -1;
        }
        t->tok = tokenizer_open_model(path, 0, err, errlen);
    }
    if (!t->tok)
        return -1;
    t->doc = tokenizer_doc_token(t->tok);
    t->bos = tokenizer_adds_doc_token(t->tok);
    snprintf(t->what, sizeof t->what, "%s (%s)", tokenizer_name(t->tok), path);
    return 0;
}
