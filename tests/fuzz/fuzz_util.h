/* What the libFuzzer harnesses of tests/fuzz/ share: a scratch directory
 * per process (in /dev/shm where there is one, so that the files a harness
 * writes for every input cost no disk), whole-file writes, splitting an
 * input in two at a marker, and the tiny shard set that specs submitted by
 * a harness name. A harness that cannot set itself up stops the fuzzer
 * (fuzz_die): its results would mean nothing. */
#ifndef COD_FUZZ_UTIL_H
#define COD_FUZZ_UTIL_H

#include <stddef.h>

/* Prints the message and aborts. */
void fuzz_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* This process's scratch directory (made at the first call, removed at exit). */
const char *fuzz_dir(void);
/* fuzz_dir()/name into out (cap bytes). */
void fuzz_path(char *out, size_t cap, const char *name);
/* fuzz_path, and makes that directory. */
void fuzz_subdir(char *out, size_t cap, const char *name);
/* Writes an input to fuzz_dir()/name, for a reader that takes a path;
 * returns the path (the same buffer at every call). */
const char *fuzz_input_file(const char *name, const void *data, size_t n);
/* Writes data to path whole, replacing it. */
void fuzz_write(const char *path, const void *data, size_t n);

/* Runs fn(arg) on a helper thread that never takes SIGALRM, and waits for
 * it. libFuzzer's -timeout rides on SIGALRM, whose handler interrupts a
 * blocking system call on the thread it lands on (EINTR): a call that
 * would block for good, such as opening a FIFO, would fail after a tick
 * and pass for a slow input. Off that thread it blocks, and libFuzzer
 * reports the input as a timeout. */
void fuzz_unalarmed(void (*fn)(void *), void *arg);

/* Splits data at the first occurrence of marker: *second points past it and
 * the first part's length is returned; without the marker everything is
 * the first part and *second is NULL. */
size_t fuzz_split(const unsigned char *data, size_t n, const char *marker,
                  const unsigned char **second, size_t *second_n);

/* A file whose first lines are the input's and the rest base's, line for
 * line: an input of k lines replaces base's first k (a longer one is the
 * whole file). Lets a loader that insists on a fixed number of lines (a
 * tokenizer's vocabulary) be fuzzed from small inputs. Caller frees. */
char *fuzz_overlay_lines(const unsigned char *in, size_t n, const char *base, size_t base_n,
                         size_t *out_n);

/* A data directory a spec may name: train_000000.bin, val_000000.bin (byte
 * tokens), meta.json (vocab_size 257); beside them the things a server's
 * filesystem also holds: a FIFO (fifo.bin), a directory (dir.bin), an
 * empty file (empty.bin), a file too short for a header (short.bin), and
 * fifo_meta/: a shard whose meta.json is a FIFO.
 * Returns its path. */
const char *fuzz_data_dir(void);
/* Replaces every "@/" in data with the data directory's path and a '/', so
 * that inputs name the data without knowing where it lies. Caller frees. */
char *fuzz_expand_data(const unsigned char *data, size_t n, size_t *out_n);

#endif
