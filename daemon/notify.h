/* systemd's notify protocol (Type=notify), written directly: one datagram to
 * $NOTIFY_SOCKET, no libsystemd (docs/api.md). A no-op without the variable. */
#ifndef COD_NOTIFY_H
#define COD_NOTIFY_H

/* Sends a state line such as "READY=1"; 0 when sent or not under systemd. */
int notify_send(const char *state);
/* Half the watchdog interval systemd asked for, in seconds; 0 when none. */
double notify_watchdog_interval(void);

#endif
