/* Signals: SIGTERM and SIGINT ask for a graceful stop; SIGPIPE is ignored
 * (a client that hangs up must not kill the server). */
#ifndef COD_SHUTDOWN_H
#define COD_SHUTDOWN_H

/* Installs the handlers and masks the two in the calling thread, which
 * the threads it starts after inherit; call from main before the server
 * starts. */
int shutdown_setup(void);
/* Unmasks them in main and blocks until SIGTERM or SIGINT arrives (at once
 * if one came since the setup); returns the signal. */
int shutdown_wait(void);

#endif
