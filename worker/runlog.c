/* The worker's log: see runlog.h. One process runs one job at a time, so
 * the open run log is process state, guarded for the reporter thread. */
#include "worker/runlog.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *file;
static int64_t current;

double runlog_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec * 1e-6;
}

int runlog_open(const char *path, int64_t experiment, char *err, size_t errlen)
{
    FILE *f = path ? fopen(path, "a") : NULL;
    if (path && !f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&mu);
    if (file)
        fclose(file);
    file = f;
    current = experiment;
    pthread_mutex_unlock(&mu);
    return 0;
}

void runlog_close(void)
{
    runlog_open(NULL, 0, NULL, 0);
}

void runlog_printf(const char *fmt, ...)
{
    char msg[2048], ts[40];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n')
            *p = ' '; /* one line each: the log file is read back line by line */
    double t = runlog_now();
    time_t sec = (time_t)t;
    struct tm tm;
    localtime_r(&sec, &tm);
    size_t k = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + k, sizeof ts - k, ".%03d", (int)((t - (double)sec) * 1000.0));
    pthread_mutex_lock(&mu);
    if (current)
        printf("%s [exp %lld] %s\n", ts, (long long)current, msg);
    else
        printf("%s %s\n", ts, msg);
    fflush(stdout);
    /* The server gets the line as the trainer wrote it: it stamps its own time. */
    if (file && (fprintf(file, "%s\n", msg) < 0 || fflush(file) != 0)) {
        fprintf(stderr, "cod-worker: writing the run log failed; lines go to stdout only\n");
        fclose(file);
        file = NULL;
    }
    pthread_mutex_unlock(&mu);
}
