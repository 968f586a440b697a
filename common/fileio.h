/* Durable file I/O shared by everything that writes or reads whole files
 * (shards, safetensors, checkpoints, specs, tokenizer files): full writes
 * across short writes and EINTR, fsync of a file and of the directory that
 * holds a renamed name, mkdir -p, whole-file reads whose errors name the
 * path, and JSON documents written the same durable way. */
#ifndef COD_FILEIO_H
#define COD_FILEIO_H

#include <stddef.h>
#include <sys/stat.h>

#include <jansson.h>

/* 0, or -1 with errno set */
int fio_write_all(int fd, const void *buf, size_t n);
int fio_fsync_path(const char *path);
/* Makes a rename of PATH durable: fsyncs the directory that holds it. */
int fio_fsync_dir_of(const char *path);
int fio_mkdir_p(const char *path, char *err, size_t errlen);
/* Opens PATH read-only and stats it: the descriptor, or -1 with
 * err = "PATH: reason". */
int fio_open_stat(const char *path, struct stat *st, char *err, size_t errlen);
/* On success *data is malloc'ed with a NUL after the last byte (text parsers
 * may stop on it) and *len is the byte count; returns 0. On failure -1 with
 * err = "PATH: reason" and *data = NULL. */
int fio_read_file(const char *path, unsigned char **data, size_t *len, char *err, size_t errlen);

/* A file written whole and durably: fio_temp_open creates PATH.tmp, the
 * caller writes to fd, and fio_temp_commit fsyncs it, renames it over PATH
 * and fsyncs the directory, so that readers see the old file or the whole
 * new one and a 0 means it is on disk. commit takes the writes' own result
 * (rc, errno set when -1): on any failure the temporary file is removed and
 * err says "PATH: cannot write: reason". fio_temp_abort drops it. */
struct fio_temp {
    int fd;
    char path[4200], tmp[4300];
};
int fio_temp_open(struct fio_temp *t, const char *path, char *err, size_t errlen);
int fio_temp_commit(struct fio_temp *t, int rc, char *err, size_t errlen);
void fio_temp_abort(struct fio_temp *t);

/* Writes len bytes of text to PATH that way. */
int fio_write_text(const char *path, const char *text, size_t len, char *err, size_t errlen);

/* Writes j (the reference is stolen; indented, keys sorted) to DIR/NAME,
 * creating DIR, as a temporary file fsynced and renamed into place. A NULL
 * j is reported as out of memory, so callers pass a builder's result. */
int fio_write_json(json_t *j, const char *dir, const char *name, char *err, size_t errlen);

#endif
