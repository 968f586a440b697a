/* Signals: SIGTERM and SIGINT ask for a graceful stop; SIGPIPE is ignored
 * (a client that hangs up must not kill the server). */
#ifndef COD_SHUTDOWN_H
#define COD_SHUTDOWN_H

/* Installs the handlers; call before the server starts. */
int shutdown_setup(void);
/* Blocks until SIGTERM or SIGINT arrives; returns the signal. */
int shutdown_wait(void);

#endif
