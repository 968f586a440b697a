/* A failing disk under SQLite, for the fault tests: a VFS that wraps the
 * default one and fails writes, syncs or reads on demand, the way a
 * full disk (ENOSPC) or a dying one (EIO) fails them. It is used two ways,
 * so that cod-server's own code carries no test hook:
 *   - linked into a test (tests/unit/test_store_faults.c), which installs
 *     it and says what fails with faulty_vfs_fail;
 *   - preloaded into the real cod-server (build/test-lib/faulty_vfs.so,
 *     LD_PRELOAD) with COD_FAULTY_VFS=FILE in the environment: it installs
 *     itself, and while FILE exists every operation FILE names fails, e.g.
 *     `echo "write sync ENOSPC" > FILE`; removing FILE mends the disk.
 * Each failure is told on stderr ("faulty_vfs: ..."), so a test can wait
 * for it. */
#ifndef COD_TESTS_FAULTY_VFS_H
#define COD_TESTS_FAULTY_VFS_H

enum { FAULTY_WRITE = 1, FAULTY_SYNC = 2, FAULTY_READ = 4 };

/* Makes the shim SQLite's default VFS, wrapping the one that was: 0, or -1. */
int faulty_vfs_install(void);
/* After `skip` more operations of `ops` succeed, fails `count` of them (-1:
 * every one until faulty_vfs_clear) as errno `err` would: a write with
 * ENOSPC as SQLITE_FULL, anything else as the operation's SQLITE_IOERR. */
void faulty_vfs_fail(int ops, int err, long skip, long count);
void faulty_vfs_clear(void);
/* How many operations it has failed. */
long faulty_vfs_failed(void);

#endif
