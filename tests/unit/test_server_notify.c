/* sd_notify written by hand (daemon/notify.c): the datagram reaches the
 * socket named by NOTIFY_SOCKET, filesystem and abstract alike; nothing
 * happens without the variable; the watchdog interval is half of
 * WATCHDOG_USEC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/notify.h"
#include "tests/check.h"

/* A datagram socket bound at name ('@' = abstract); -1 on failure. */
static int listen_at(const char *name)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t n = strlen(name);
    memcpy(sa.sun_path, name, n);
    if (name[0] == '@')
        sa.sun_path[0] = 0;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, (socklen_t)(sizeof(sa.sun_family) + n)) != 0)
        return -1;
    return fd;
}

static void receives(const char *name)
{
    int fd = listen_at(name);
    CHECK(fd >= 0, "bind %s", name);
    setenv("NOTIFY_SOCKET", name, 1);
    CHECK(notify_send("READY=1") == 0, "send");
    char buf[64] = "";
    ssize_t r = fd >= 0 ? recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT) : -1;
    CHECK(r == 7 && !strcmp(buf, "READY=1"), "got %zd bytes \"%s\"", r, buf);
    if (fd >= 0)
        close(fd);
}

static void filesystem_socket(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/cod-notify-%d", (int)getpid());
    unlink(path);
    receives(path);
    unlink(path);
}

static void abstract_socket(void)
{
    char name[64];
    snprintf(name, sizeof name, "@cod-notify-%d", (int)getpid());
    receives(name);
}

static void without_systemd(void)
{
    unsetenv("NOTIFY_SOCKET");
    CHECK(notify_send("READY=1") == 0, "a no-op");
    unsetenv("WATCHDOG_USEC");
    CHECK(notify_watchdog_interval() == 0, "no watchdog");
}

static void watchdog_interval(void)
{
    setenv("WATCHDOG_USEC", "4000000", 1);
    unsetenv("WATCHDOG_PID");
    CHECK(notify_watchdog_interval() == 2.0, "half of 4 s: %g", notify_watchdog_interval());
    setenv("WATCHDOG_PID", "1", 1);  /* meant for another process */
    CHECK(notify_watchdog_interval() == 0, "not ours");
}

int main(void)
{
    RUN(filesystem_socket);
    RUN(abstract_socket);
    RUN(without_systemd);
    RUN(watchdog_interval);
    CHECK_EXIT();
}
