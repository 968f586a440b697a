/* Signal handling through a self-pipe. Masking the signals and calling
 * sigwait breaks as soon as a library starts a thread before main (a
 * pthread BLAS build does): that thread does not inherit the mask, and a
 * SIGTERM delivered to it would kill the process on the spot. A handler
 * works in whichever thread receives the signal; it only writes one byte,
 * and the stop sequence runs as ordinary code in main. */
#include "daemon/shutdown.h"

#include <errno.h>
#include <fcntl.h>
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

int shutdown_setup(void)
{
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
    return sigaction(SIGPIPE, &sa, NULL);
}

int shutdown_wait(void)
{
    unsigned char b = 0;
    for (;;) {
        ssize_t r = read(pipe_fd[0], &b, 1);
        if (r == 1)
            return b;
        if (r < 0 && errno != EINTR)
            return SIGTERM;  /* cannot wait any more: stop rather than hang */
    }
}
