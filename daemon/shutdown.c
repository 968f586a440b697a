/* Signal handling through a self-pipe. Masking the signals and calling
 * sigwait breaks as soon as a library starts a thread before main (a
 * pthread BLAS build does): that thread does not inherit the mask, and a
 * SIGTERM delivered to it would kill the process on the spot. A handler
 * works in whichever thread receives the signal; it only writes one byte,
 * and the stop sequence runs as ordinary code in main. The server's own
 * threads, started after the setup, inherit a mask of the two signals, so
 * that the kernel hands them to main, the thread that waits for them (and
 * not to a thread whose wait restarts: ThreadSanitizer, which defers a
 * handler until the interrupted call returns, would never run it). */
#include "daemon/shutdown.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int pipe_fd[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(pipe_fd[1], &b, 1) < 0) {
        /* the pipe is full: a stop is already pending */
    }
    errno = saved;
}

static sigset_t stop_signals;

int shutdown_setup(void)
{
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    if (pipe2(pipe_fd, O_CLOEXEC) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;  /* other threads' system calls carry on */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        return -1;
    sa.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &sa, NULL) != 0)
        return -1;
    /* until shutdown_wait: a signal meanwhile is pending, not lost */
    return pthread_sigmask(SIG_BLOCK, &stop_signals, NULL) == 0 ? 0 : -1;
}

int shutdown_wait(void)
{
    if (pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL) != 0)
        return SIGTERM;  /* main could never receive them: stop rather than hang */
    unsigned char b = 0;
    for (;;) {
        /* poll, never restarted after a handler, where read would be
         * (SA_RESTART): under ThreadSanitizer, which runs the handler only
         * once the call returns, a restarted read waited for ever */
        struct pollfd p = {pipe_fd[0], POLLIN, 0};
        int n = poll(&p, 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 1 || read(pipe_fd[0], &b, 1) != 1)
            return SIGTERM;  /* cannot wait any more: stop rather than hang */
        return b;
    }
}
