/* Instruction data (sft/): LLM-Adapters' template byte for byte, the
 * records read from JSON arrays and JSON lines (compressed too) one at a
 * time, refusals that name the file and line, a record's tokens and loss
 * mask worked out by hand (with and without train_on_inputs, the cut, the
 * end token, a tokenizer that ends documents), packing, and the loss the
 * model computes over a row: exactly the response's tokens and the end
 * token, against the log-softmax of its logits at those positions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/rowset.h"
#include "kernels/ops.h"
#include "sft/records.h"
#include "sft/render.h"
#include "sft/rows.h"
#include "tests/check.h"
#include "trainer/dataloader.h"
#include "trainer/model.h"

static char dir[256];

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static json_t *obj(const char *text)
{
    return json_loads(text, 0, NULL);
}

static void test_template(void)
{
    /* finetune.py's f-strings: each line after the first indented by 16
     * spaces, the blank lines inside them too but the first, and the
     * first line's trailing spaces (one with an input, two without) */
    const char *ind = "                ";
    char want[2048];
    snprintf(want, sizeof want,
             "Below is an instruction that describes a task, paired with an input that provides "
             "further context. Write a response that appropriately completes the request. \n"
             "\n%s### Instruction:\n%sAdd them.\n%s\n%s### Input:\n%s2 3\n%s\n%s### Response:\n%s",
             ind, ind, ind, ind, ind, ind, ind, ind);
    json_t *r = obj("{\"instruction\": \"Add them.\", \"input\": \"2 3\", \"output\": \"5\"}");
    struct sft_text t;
    char why[256];
    CHECK(sft_render(r, &t, why, sizeof why) == 0, "%s", why);
    CHECK(t.prompt_len == strlen(want) && !memcmp(t.text, want, t.prompt_len),
          "with an input:\n[%.*s]\nwant\n[%s]", (int)t.prompt_len, t.text, want);
    CHECK(t.len == t.prompt_len + 1 && t.text[t.prompt_len] == '5', "the output after the prompt");
    sft_text_free(&t);
    json_decref(r);

    snprintf(want, sizeof want,
             "Below is an instruction that describes a task. Write a response that appropriately "
             "completes the request.  \n\n%s### Instruction:\n%sSay hi.\n%s\n%s### Response:\n%s",
             ind, ind, ind, ind, ind);
    /* "" and null are no input, as `if data_point["input"]` reads them */
    const char *plain[] = {"{\"instruction\": \"Say hi.\", \"input\": \"\", \"output\": \"hi\"}",
                           "{\"instruction\": \"Say hi.\", \"input\": null, \"output\": \"hi\"}",
                           "{\"instruction\": \"Say hi.\", \"output\": \"hi\", \"answer\": 1}"};
    for (int i = 0; i < 3; i++) {
        r = obj(plain[i]);
        CHECK(sft_render(r, &t, why, sizeof why) == 0, "%s", why);
        CHECK(t.prompt_len == strlen(want) && !memcmp(t.text, want, t.prompt_len) &&
                  !strcmp(t.text + t.prompt_len, "hi"),
              "without an input (%d):\n[%s]", i, t.text);
        sft_text_free(&t);
        json_decref(r);
    }
    r = obj("{\"prompt\": \"Q: 2+3\\nA:\", \"response\": \" 5\"}");
    CHECK(sft_render(r, &t, why, sizeof why) == 0 && t.prompt_len == 9 &&
              !strcmp(t.text, "Q: 2+3\nA: 5"),
          "the generic layout: prompt then response");
    sft_text_free(&t);
    json_decref(r);
    struct {
        const char *rec, *want;
    } bad[] = {
        {"{\"instruction\": \"x\", \"prompt\": \"y\"}", "both"},
        {"{\"text\": \"x\"}", "neither layout"},
        {"{\"instruction\": \"x\"}", "\"output\" is missing"},
        {"{\"instruction\": \"x\", \"input\": 3, \"output\": \"y\"}", "\"input\" is not a string"},
        {"{\"prompt\": \"x\", \"response\": 1}", "\"response\" is not a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = obj(bad[i].rec);
        CHECK(sft_render(r, &t, why, sizeof why) == -1 && strstr(why, bad[i].want),
              "%s: %s", bad[i].rec, why);
        json_decref(r);
    }
}

struct seen {
    long n;
    char names[16][16];
    long lines[16];
};

static int note(void *arg, const struct sft_record *r, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    struct seen *s = arg;
    if (s->n < 16) {
        snprintf(s->names[s->n], 16, "%s", json_string_value(json_object_get(r->obj, "prompt")));
        s->lines[s->n] = r->line;
    }
    s->n++;
    return 0;
}

static void test_records(void)
{
    char pat[512], err[1024];
    /* braces, brackets and escaped quotes inside strings; records over lines */
    write_file("a.json", "\xef\xbb\xbf[\n  {\"prompt\": \"p}1\", \"response\": \"r\\\"]\"},\n"
                         "  {\"prompt\": \"p2\",\n   \"response\": \"{[\", \"n\": {\"x\": [1, {}]}}\n]\n");
    write_file("b.jsonl", "{\"prompt\": \"p3\", \"response\": \"r\"}\n\n"
                          "{\"prompt\": \"p4\", \"response\": \"r\"}");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "gzip -c %s/b.jsonl > %s/c.jsonl.gz", dir, dir);
    CHECK(system(cmd) == 0, "gzip");
    struct seen s = {0};
    snprintf(pat, sizeof pat, "%s/*.json*", dir);
    CHECK(sft_records_each(pat, "data.train", note, &s, err, sizeof err) == 0, "%s", err);
    CHECK(s.n == 6, "6 records, got %ld", s.n);
    const char *want[] = {"p}1", "p2", "p3", "p4", "p3", "p4"};
    long lines[] = {2, 3, 1, 3, 1, 3};
    for (int i = 0; i < 6 && i < s.n; i++)
        CHECK(!strcmp(s.names[i], want[i]) && s.lines[i] == lines[i], "record %d: %s at line %ld",
              i, s.names[i], s.lines[i]);

    struct {
        const char *text, *want;
    } bad[] = {
        {"[{\"prompt\": \"a\"}, 3]", "line 1: the array holds something that is no record"},
        {"[\n{\"prompt\": \"a\"},\n{\"prompt\": \"b\"", "line 3: the file ends inside its array"},
        {"{\"prompt\": \"a\"}\n[1]\n", "line 2: record 2 is not a JSON object"},
        {"{\"prompt\": \"a\"}\n{\"prompt\": \n", "line 2: record 2 is not a JSON object"},
        {"[{\"a\": 1}] x", "text after the array"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file("bad.json", bad[i].text);
        snprintf(pat, sizeof pat, "%s/bad.json", dir);
        memset(&s, 0, sizeof s);
        int rc = sft_records_each(pat, "data.val", note, &s, err, sizeof err);
        CHECK(rc == -1 && strstr(err, bad[i].want) && strstr(err, "data.val: ") &&
                  strstr(err, "bad.json"),
              "%s: %s", bad[i].text, err);
    }
    unlink(pat);
    snprintf(pat, sizeof pat, "%s/none*.json", dir);
    CHECK(sft_records_each(pat, "data.train", note, &s, err, sizeof err) == -1 &&
              strstr(err, "data.train: no file matches"),
          "%s", err);
}

/* The bytes tokenizer: a token is a byte, 256 marks documents and ends answers. */
static struct tokenizer *bytes_tok(void)
{
    char err[256];
    struct tokenizer *t = tokenizer_open("bytes", NULL, 0, err, sizeof err);
    CHECK(t, "%s", err);
    return t;
}

static int tokens_of(const struct sft_tokens *t, const struct sft_rows_cfg *c, const char *text,
                     size_t prompt_len, uint32_t *ids, uint8_t *flags, int *cut)
{
    char err[256];
    struct tok_session *ses = tok_session_new(t->tok, err, sizeof err);
    struct tok_ids out = {0};
    uint8_t *f = NULL;
    size_t cap = 0;
    int n = sft_record_tokens(t, ses, c, text, prompt_len, strlen(text), &out, &f, &cap, cut, err,
                              sizeof err);
    CHECK(n >= 0, "%s", err);
    for (int i = 0; i < n; i++) {
        ids[i] = out.v[i];
        flags[i] = f[i];
    }
    free(f);
    tok_ids_free(&out);
    tok_session_free(ses);
    return n;
}

static void test_mask(void)
{
    struct tokenizer *tok = bytes_tok();
    struct sft_tokens t = {tok, 256, 256, 0};
    struct sft_rows_cfg c = {.row_tokens = 16, .cutoff_len = 16};
    uint32_t ids[32];
    uint8_t fl[32];
    int cut;
    /* prompt "ab", response "c": <doc> a b c <end>; the loss over c and <end> */
    int n = tokens_of(&t, &c, "abc", 2, ids, fl, &cut);
    uint32_t want[] = {256, 'a', 'b', 'c', 256};
    uint8_t mask[] = {0, 0, 0, 1, 1};
    CHECK(n == 5 && !cut && !memcmp(ids, want, sizeof want) && !memcmp(fl, mask, sizeof mask),
          "n %d: %u %u %u %u %u / %d %d %d %d %d", n, ids[0], ids[1], ids[2], ids[3], ids[4], fl[0],
          fl[1], fl[2], fl[3], fl[4]);
    c.train_on_inputs = 1;
    n = tokens_of(&t, &c, "abc", 2, ids, fl, &cut);
    CHECK(n == 5 && fl[1] && fl[2] && fl[3] && fl[4], "train_on_inputs: every token a target");
    c.train_on_inputs = 0;
    /* 4 at most: <doc> a b c fits, but leaves no room for the end token,
     * which is not added (LLM-Adapters adds it only below cutoff_len) */
    c.cutoff_len = 4;
    n = tokens_of(&t, &c, "abc", 2, ids, fl, &cut);
    CHECK(n == 4 && !cut && ids[3] == 'c' && fl[3] && !fl[2], "cutoff 4: n %d", n);
    /* cut at 3: the prompt fills it, nothing is a target */
    c.cutoff_len = 3;
    n = tokens_of(&t, &c, "abc", 2, ids, fl, &cut);
    CHECK(n == 3 && cut && !fl[0] && !fl[1] && !fl[2], "cut at 3: no target");
    /* a tokenizer that ends documents: no leading mark, the end token last */
    struct sft_tokens te = {tok, 256, 256, 1};
    c.cutoff_len = 0;
    n = tokens_of(&te, &c, "abc", 2, ids, fl, &cut);
    CHECK(n == 4 && ids[0] == 'a' && ids[3] == 256 && !fl[1] && fl[2] && fl[3],
          "doc at end: a b c <end>, targets c and <end>");
    tokenizer_close(tok);
}

static void write_records(const char *name, const char *const *prompts, const char *const *resp,
                          int n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < n; i++) {
        json_t *r = json_pack("{s:s,s:s}", "prompt", prompts[i], "response", resp[i]);
        char *line = json_dumps(r, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(r);
    }
    fclose(f);
}

static void test_rows_and_loss(void)
{
    struct tokenizer *tok = bytes_tok();
    struct sft_tokens t = {tok, 256, 256, 0};
    const char *p[] = {"ab", "xyz", "q"}, *r[] = {"c", "w", ""};
    write_records("rows.jsonl", p, r, 3);
    char pat[512], tr[512], va[512], err[1024];
    snprintf(pat, sizeof pat, "%s/rows.jsonl", dir);
    snprintf(tr, sizeof tr, "%s/train.rows", dir);
    snprintf(va, sizeof va, "%s/val.rows", dir);
    int T = 6;
    struct sft_rows_cfg c = {.row_tokens = T + 1, .cutoff_len = T + 1};
    struct sft_rows_stats st, sv;
    CHECK(sft_make_rows(&t, &c, pat, NULL, tr, va, &st, &sv, err, sizeof err) == 0, "%s", err);
    /* q with an empty response still has its end token to learn */
    CHECK(st.records == 3 && st.rows == 3 && st.targets == 2 + 2 + 1 && st.tokens == 5 + 6 + 3,
          "records %ld rows %ld targets %lld tokens %lld", st.records, st.rows,
          (long long)st.targets, (long long)st.tokens);
    struct loader l;
    CHECK(loader_open_rows(&l, tr, T, 1, 0, err, sizeof err) == 0, "%s", err);
    int32_t tok_in[6], tgt[6];
    int got = loader_chunk(&l, 0, tok_in, tgt);
    int32_t want_in[] = {256, 'a', 'b', 'c', 0, 0}, want_tgt[] = {-1, -1, 'c', 256, -1, -1};
    CHECK(got == 2 && !memcmp(tok_in, want_in, sizeof want_in) &&
              !memcmp(tgt, want_tgt, sizeof want_tgt),
          "row 0: the targets c and <end> at positions 2 and 3 (%d)", got);

    /* the model's loss over the row: exactly the two targets, each the
     * negative log-softmax of its logits at its position */
    struct model m;
    struct model_config mc = {.dim = 16, .n_layers = 1, .n_heads = 2, .ffn_dim = 32,
                              .vocab = 257, .seq_len = T, .rope_theta = 10000,
                              .norm_eps = 1e-6, .embed_std = 0.02};
    variant_preset("pre", &mc.norm);
    CHECK(model_create(&m, &ops_cpu, &mc, 1, err, sizeof err) == 0 &&
              model_init_weights(&m, 3, err, sizeof err) == 0,
          "%s", err);
    double sum = model_forward(&m, tok_in, tgt, 1, 0);
    real *lg = malloc((size_t)T * 257 * sizeof(real));
    model_logits(&m, tok_in, tgt, 1, lg);
    double want = 0;
    for (int pos = 2; pos <= 3; pos++) {
        double mx = -1e30, z = 0;
        for (int v = 0; v < 257; v++)
            mx = fmax(mx, lg[pos * 257 + v]);
        for (int v = 0; v < 257; v++)
            z += exp(lg[pos * 257 + v] - mx);
        want += mx + log(z) - lg[pos * 257 + tgt[pos]];
    }
    CHECK(fabs(sum - want) < 1e-4 * fabs(want), "the loss %.6f, by hand %.6f", sum, want);
    /* train_on_inputs: the prompt's tokens count too */
    c.train_on_inputs = 1;
    CHECK(sft_make_rows(&t, &c, pat, NULL, tr, va, &st, &sv, err, sizeof err) == 0, "%s", err);
    loader_close(&l);
    CHECK(loader_open_rows(&l, tr, T, 1, 0, err, sizeof err) == 0, "%s", err);
    got = loader_chunk(&l, 0, tok_in, tgt);
    int32_t all_tgt[] = {'a', 'b', 'c', 256, -1, -1};
    CHECK(got == 4 && !memcmp(tgt, all_tgt, sizeof all_tgt), "train_on_inputs: 4 targets (%d)",
          got);
    double sum_all = model_forward(&m, tok_in, tgt, 1, 0);
    CHECK(sum_all > sum, "the prompt's losses added: %.4f > %.4f", sum_all, sum);
    free(lg);
    model_destroy(&m);
    loader_close(&l);

    /* packing: the records end to end in blocks of T + 1 that overlap by one */
    c = (struct sft_rows_cfg){.row_tokens = 4, .cutoff_len = 0, .pack = 1};
    CHECK(sft_make_rows(&t, &c, pat, NULL, tr, va, &st, &sv, err, sizeof err) == 0, "%s", err);
    struct rowset rs;
    CHECK(rowset_open(&rs, tr, err, sizeof err) == 0, "%s", err);
    /* 256 a b c 256 | 256 x y z w 256 | 256 q 256: 14 tokens in blocks of 4
     * stepping by 3: [0,4) [3,7) [6,10) [9,13) [12,14) */
    CHECK(rs.n_rows == 5 && rs.index[4].len == 2, "5 blocks, the last of 2 tokens: %lld",
          (long long)rs.n_rows);
    CHECK(rowset_tokens(&rs, 1)[0] == 'c' && rowset_tokens(&rs, 1)[1] == 256 &&
              rowset_flags(&rs, 1)[1] && !rowset_flags(&rs, 1)[0],
          "a block starts with the last token of the one before, which it does not predict");
    CHECK(st.targets == 5, "packed targets: c <end> w <end> <end>, got %lld", (long long)st.targets);
    rowset_close(&rs);

    /* held out of the train set: a seeded, fixed choice */
    c = (struct sft_rows_cfg){.row_tokens = T + 1, .cutoff_len = T + 1, .val_size = 1};
    CHECK(sft_make_rows(&t, &c, pat, NULL, tr, va, &st, &sv, err, sizeof err) == 0, "%s", err);
    CHECK(st.records == 2 && sv.records == 1 && sv.rows == 1, "2 + 1 records");
    c.val_size = 3;
    CHECK(sft_make_rows(&t, &c, pat, NULL, tr, va, &st, &sv, err, sizeof err) == -1 &&
              strstr(err, "sft.val_size"),
          "all held out: %s", err);
    tokenizer_close(tok);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/cod-test-sft-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    RUN(test_template);
    RUN(test_records);
    RUN(test_mask);
    RUN(test_rows_and_loss);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    CHECK_EXIT();
}
