/* libFuzzer harness: the worker protocol's bodies (api/worker_api.c) --
 * register, lease, offline, heartbeat, metric and log reports, finish, the
 * rendezvous -- sent over HTTP to cod-server in-process (http_driver.h)
 * with the worker token. The first byte of an input picks the route, the
 * second the id in its path (1 to 4: the fixture's workers and runs and
 * ids past them), the rest is the body; every input starts from the
 * fixture, whose runs 1 and 2 are leased. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/fuzz/http_driver.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    http_start();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const routes[] = {
        "/v1/workers/register",    "/v1/workers/%d/lease",   "/v1/workers/%d/offline",
        "/v1/runs/%d/heartbeat",   "/v1/runs/%d/metrics",    "/v1/runs/%d/logs",
        "/v1/runs/%d/finish",      "/v1/runs/%d/rendezvous",
    };
    if (size < 2)
        return 0;
    http_reset();
    char target[64];
    snprintf(target, sizeof target, routes[data[0] % 8], 1 + data[1] % 4);
    static const char auth[] = "Authorization: Bearer " FUZZ_WORKER_TOKEN "\n";
    http_request("POST", 4, target, strlen(target), auth, sizeof auth - 1, (const char *)data + 2,
                 size - 2);
    return 0;
}
