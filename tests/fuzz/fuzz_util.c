/* Scratch files and shared fixtures of the fuzz harnesses: see fuzz_util.h. */
#include "tests/fuzz/fuzz_util.h"

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/shard.h"

void fuzz_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz harness: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static char scratch[256];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void remove_scratch(void)
{
    if (scratch[0])
        nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
    if (scratch[0])
        return scratch;
    struct stat st;
    const char *tmp = getenv("TMPDIR");
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
                           ? "/dev/shm"
                       : tmp && *tmp ? tmp
                                     : "/tmp";
    snprintf(scratch, sizeof scratch, "%s/cod-fuzz-XXXXXX", base);
    if (!mkdtemp(scratch))
        fuzz_die("mkdtemp %s: %s", scratch, strerror(errno));
    if (atexit(remove_scratch) != 0)
        fuzz_die("atexit failed");
    return scratch;
}

void fuzz_path(char *out, size_t cap, const char *name)
{
    if ((size_t)snprintf(out, cap, "%s/%s", fuzz_dir(), name) >= cap)
        fuzz_die("path too long: %s/%s", fuzz_dir(), name);
}

void fuzz_subdir(char *out, size_t cap, const char *name)
{
    fuzz_path(out, cap, name);
    if (mkdir(out, 0755) != 0)
        fuzz_die("mkdir %s: %s", out, strerror(errno));
}

const char *fuzz_input_file(const char *name, const void *data, size_t n)
{
    static char path[320];
    fuzz_path(path, sizeof path, name);
    fuzz_write(path, data, n);
    return path;
}

void fuzz_write(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
        fuzz_die("cannot write %s: %s", path, strerror(errno));
}

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_posted = PTHREAD_COND_INITIALIZER, job_done = PTHREAD_COND_INITIALIZER;
static void (*job_fn)(void *);
static void *job_arg;
static int job_pending;

static void *helper(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&job_lock);
    for (;;) {
        while (!job_pending)
            pthread_cond_wait(&job_posted, &job_lock);
        pthread_mutex_unlock(&job_lock);
        job_fn(job_arg);
        pthread_mutex_lock(&job_lock);
        job_pending = 0;
        pthread_cond_signal(&job_done);
    }
    return NULL;
}

void fuzz_unalarmed(void (*fn)(void *), void *arg)
{
    static int started;
    if (!started) {
        /* the helper inherits the mask it is created under */
        sigset_t alarm, old;
        sigemptyset(&alarm);
        sigaddset(&alarm, SIGALRM);
        pthread_t t;
        if (pthread_sigmask(SIG_BLOCK, &alarm, &old) != 0 || pthread_create(&t, NULL, helper, NULL) != 0 ||
            pthread_sigmask(SIG_SETMASK, &old, NULL) != 0)
            fuzz_die("cannot start the helper thread");
        started = 1;
    }
    pthread_mutex_lock(&job_lock);
    job_fn = fn;
    job_arg = arg;
    job_pending = 1;
    pthread_cond_signal(&job_posted);
    while (job_pending)
        pthread_cond_wait(&job_done, &job_lock);
    pthread_mutex_unlock(&job_lock);
}

size_t fuzz_split(const unsigned char *data, size_t n, const char *marker,
                  const unsigned char **second, size_t *second_n)
{
    size_t m = strlen(marker);
    const unsigned char *hit = n >= m ? memmem(data, n, marker, m) : NULL;
    if (!hit) {
        *second = NULL;
        *second_n = 0;
        return n;
    }
    *second = hit + m;
    *second_n = n - (size_t)(hit - data) - m;
    return (size_t)(hit - data);
}

char *fuzz_overlay_lines(const unsigned char *in, size_t n, const char *base, size_t base_n,
                         size_t *out_n)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += in[i] == '\n';
    if (n && in[n - 1] != '\n')
        lines++;
    const char *rest = base;
    for (size_t k = 0; k < lines && rest; k++) {
        const char *eol = memchr(rest, '\n', base_n - (size_t)(rest - base));
        rest = eol ? eol + 1 : NULL;
    }
    size_t rest_n = rest ? base_n - (size_t)(rest - base) : 0;
    char *out = malloc(n + 1 + rest_n);
    if (!out)
        fuzz_die("out of memory");
    memcpy(out, in, n);
    size_t o = n;
    if (rest_n && n && in[n - 1] != '\n')
        out[o++] = '\n';
    if (rest_n)
        memcpy(out + o, rest, rest_n);
    *out_n = o + rest_n;
    return out;
}

static char data_dir[300];

const char *fuzz_data_dir(void)
{
    if (data_dir[0])
        return data_dir;
    fuzz_subdir(data_dir, sizeof data_dir, "data");
    char path[400], err[512];
    static const char text[] = "The Curse of Depth in Large Language Models: a fuzzing fixture.";
    uint32_t tok[sizeof text];
    for (size_t i = 0; i < sizeof text; i++)
        tok[i] = (unsigned char)text[i];
    static const char *const shards[] = {"train_000000.bin", "val_000000.bin"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", data_dir, shards[i]);
        if (shard_write(path, tok, (int64_t)(sizeof text - 1), 2, err, sizeof err) != 0)
            fuzz_die("%s", err);
    }
    static const char meta[] = "{\"vocab_size\": 257}\n";
    snprintf(path, sizeof path, "%s/meta.json", data_dir);
    fuzz_write(path, meta, sizeof meta - 1);
    snprintf(path, sizeof path, "%s/fifo.bin", data_dir);
    if (mkfifo(path, 0644) != 0)
        fuzz_die("mkfifo %s: %s", path, strerror(errno));
    fuzz_subdir(path, sizeof path, "data/dir.bin");
    snprintf(path, sizeof path, "%s/empty.bin", data_dir);
    fuzz_write(path, "", 0);
    snprintf(path, sizeof path, "%s/short.bin", data_dir);
    fuzz_write(path, "\x28\xb6\x34\x01", 4);
    fuzz_subdir(path, sizeof path, "data/fifo_meta");
    snprintf(path, sizeof path, "%s/fifo_meta/train_000000.bin", data_dir);
    if (shard_write(path, tok, (int64_t)(sizeof text - 1), 2, err, sizeof err) != 0)
        fuzz_die("%s", err);
    snprintf(path, sizeof path, "%s/fifo_meta/meta.json", data_dir);
    if (mkfifo(path, 0644) != 0)
        fuzz_die("mkfifo %s: %s", path, strerror(errno));
    return data_dir;
}

char *fuzz_expand_data(const unsigned char *data, size_t n, size_t *out_n)
{
    const char *dir = fuzz_data_dir();
    size_t dn = strlen(dir), hits = 0;
    for (size_t i = 0; i + 1 < n; i++)
        hits += data[i] == '@' && data[i + 1] == '/';
    char *out = malloc(n + hits * dn + 1);
    if (!out)
        fuzz_die("out of memory");
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && data[i] == '@' && data[i + 1] == '/') {
            memcpy(out + o, dir, dn);
            o += dn;
            continue;  /* the '/' is copied next */
        }
        out[o++] = (char)data[i];
    }
    out[o] = 0;
    *out_n = o;
    return out;
}
