/* sd_notify by hand. */
#include "daemon/notify.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int notify_send(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path)
        return 0;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n >= sizeof sa.sun_path || (path[0] != '/' && path[0] != '@'))
        return -1;
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = 0;  /* abstract namespace */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t w = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n));
    close(fd);
    return w == (ssize_t)strlen(state) ? 0 : -1;
}

double notify_watchdog_interval(void)
{
    const char *usec = getenv("WATCHDOG_USEC");
    if (!usec)
        return 0;
    const char *pid = getenv("WATCHDOG_PID");
    if (pid && atol(pid) != (long)getpid())
        return 0;
    double s = strtod(usec, NULL) / 1e6;
    return s > 0 ? s / 2 : 0;
}
