/* cod-server: the coordinator (ARCHITECTURE.md). Opens the store, serves the
 * HTTP API, runs the reaper, and stops cleanly on SIGTERM: no new
 * connections, in-flight requests finish, the database is closed. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/routes.h"
#include "api/server.h"
#include "common/fileio.h"
#include "daemon/config.h"
#include "daemon/dblock.h"
#include "daemon/notify.h"
#include "daemon/reaper.h"
#include "daemon/shutdown.h"

int main(int argc, char **argv)
{
    struct config cfg;
    char err[1024];
    int rc = config_load(argc, argv, &cfg, err, sizeof err);
    if (rc == 1)
        return 0;
    if (rc != 0 || config_check(&cfg, err, sizeof err) != 0) {
        fprintf(stderr, "cod-server: %s\n%s", err, config_usage);
        return 2;
    }
    int check_only = 0;
    for (int i = 1; i < argc; i++) {
        check_only |= !strcmp(argv[i], "--check-db");
        if (!strcmp(argv[i], "--routes"))
            return route_print(stdout) == 0 ? 0 : 1;
    }
    if (shutdown_setup() != 0) {
        fprintf(stderr, "cod-server: cannot set up signals\n");
        return 1;
    }
    /* The port, then the database's lock, before the database is opened: a
     * server that cannot serve must not create or migrate it. */
    int port = 0, fd = -1, lock = -1;
    if (!check_only && (fd = api_listen(cfg.host, cfg.port, &port, err, sizeof err)) < 0) {
        fprintf(stderr, "cod-server: %s\n", err);
        return 1;
    }
    if (!check_only && (lock = dblock_acquire(cfg.db, err, sizeof err)) < 0) {
        fprintf(stderr, "cod-server: %s\n", err);
        close(fd);
        return 1;
    }
    struct app app;
    memset(&app, 0, sizeof app);
    app_init(&app);
    if (store_open(cfg.db, cfg.readers, &app.store, err, sizeof err) != 0) {
        fprintf(stderr, "cod-server: database: %s\n", err);
        app_destroy(&app);
        dblock_release(lock);
        if (fd >= 0)
            close(fd);
        return 1;
    }
    store_set_lock_timeout(app.store, cfg.lock_timeout_s);
    store_set_group_commit(app.store, cfg.group_commit);
    if (!check_only && store_grace(app.store, cfg.lease_s) != ST_OK) {
        fprintf(stderr, "cod-server: database: cannot give the running leases their grace\n");
        store_close(app.store);
        app_destroy(&app);
        dblock_release(lock);
        if (fd >= 0)
            close(fd);
        return 1;
    }
    if (check_only) {
        char verdict[256] = "?";
        rc = store_integrity(app.store, verdict, sizeof verdict);
        printf("%s\n", verdict);
        store_close(app.store);
        app_destroy(&app);
        return rc == 0 && !strcmp(verdict, "ok") ? 0 : 1;
    }
    app.token = cfg.token[0] ? cfg.token : NULL;
    app.worker_token = cfg.worker_token[0] ? cfg.worker_token : NULL;
    app.lease_s = cfg.lease_s;
    app.long_poll_max_s = cfg.long_poll_max_s;
    app.request_deadline_s = cfg.request_deadline_s;
    app.max_body = cfg.max_body;
    const char *roots[CONFIG_MAX_ROOTS];
    for (int i = 0; i < cfg.n_data_roots; i++)
        roots[i] = cfg.data_roots[i];
    app.submit = (struct submit_rules){
        .max_gang = cfg.max_gang, .max_cells = cfg.max_sweep, .max_axes = cfg.max_sweep_axes,
        .max_model_gib = cfg.max_model_gib,
        .roots = {roots, cfg.n_data_roots, cfg.max_data_files},
    };
    app.allowed_hosts = cfg.allowed_hosts;
    app.rendezvous_s = cfg.rendezvous_s;
    app.log_requests = cfg.log_requests;

    struct api_options o = {cfg.host, cfg.threads, cfg.write_threads, cfg.conn_limit,
                            cfg.per_ip_limit, cfg.conn_timeout_s, cfg.header_deadline_s};
    struct api_server *srv = NULL;
    struct reaper *reaper = NULL;
    if (api_start(&app, &o, fd, &srv, err, sizeof err) != 0) {
        fprintf(stderr, "cod-server: %s\n", err);
        store_close(app.store);
        app_destroy(&app);
        dblock_release(lock);
        return 1;
    }
    if (reaper_start(&app, cfg.reap_interval_s, &reaper) != 0) {
        fprintf(stderr, "cod-server: cannot start the reaper\n");
        rc = 1;
        goto stop;
    }
    /* Whole or absent: a script waiting for the file never reads half a number. */
    char port_text[16];
    int port_len = snprintf(port_text, sizeof port_text, "%d\n", port);
    if (cfg.port_file[0] &&
        fio_write_text(cfg.port_file, port_text, (size_t)port_len, err, sizeof err) != 0) {
        fprintf(stderr, "cod-server: %s\n", err);
        rc = 1;
        goto stop;
    }
    fprintf(stderr, "cod-server: listening on %s:%d, database %s%s\n", cfg.host, port, cfg.db,
            app.token ? ", tokens required" : "");
    notify_send("READY=1");
    int sig = shutdown_wait();
    fprintf(stderr, "cod-server: %s: stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    rc = 0;
stop:
    notify_send("STOPPING=1");
    api_stop(srv, cfg.grace_s);
    reaper_stop(reaper);
    store_close(app.store);
    app_destroy(&app);
    dblock_release(lock);
    fprintf(stderr, "cod-server: stopped\n");
    return rc;
}
