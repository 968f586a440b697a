/* One input file as a stream of its bytes, decompressed as its name says:
 * NAME.gz with zlib, NAME.zst with libzstd, NAME.xz with liblzma (each
 * also as several members, frames or streams one after another, as
 * parallel compressors write them), any other name as it is. Beside the
 * bytes it keeps the SHA-256 of the file as stored (sources.txt names
 * each input by it) and how much of the stored file has been read (the
 * progress bar's measure). Memory is a fixed few hundred KiB (an xz
 * stream's dictionary aside), whatever the file's size. */
#ifndef COD_TEXT_DECOMPRESS_H
#define COD_TEXT_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum dz_format { DZ_PLAIN, DZ_GZIP, DZ_ZSTD, DZ_XZ };

/* The compression a name says, and the length of the name without its
 * compression suffix ("c4.json.gz": DZ_GZIP, 7). */
enum dz_format dz_format_of(const char *path, size_t *stem_len);

struct dz;

/* NULL with err = "PATH: reason" when it cannot be opened. */
struct dz *dz_open(const char *path, char *err, size_t errlen);
/* Up to cap decompressed bytes into buf: their count, 0 at the end of the
 * data, -1 with err naming the file and the fault (a read error, corrupt
 * or truncated compressed data). */
ssize_t dz_read(struct dz *z, void *buf, size_t cap, char *err, size_t errlen);
/* Bytes of the stored file read so far. */
int64_t dz_consumed(const struct dz *z);
/* After dz_read returned 0: the stored file's SHA-256 in hex. 0, or -1
 * when libcrypto failed. */
int dz_sha256(struct dz *z, char hex[65]);
void dz_close(struct dz *z);

#endif
