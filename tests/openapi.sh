#!/usr/bin/env bash
# The API's description against the running server: tests/openapi/check.mjs
# validates /openapi.json with an OpenAPI validator (scripts/deps.sh test
# installs it), checks that it covers every route of `cod-server --routes`,
# and that real answers of every route, successes and errors, validate.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
MODULES=var/cache/openapi-validator/node_modules
if ! command -v node >/dev/null || [ ! -d "$MODULES/@seriousme/openapi-schema-validator" ]; then
    echo "FAIL openapi: needs node and $MODULES (scripts/deps.sh test installs them)"; exit 1
fi
make_data
start_server --token T --worker-token W --max-body 65536
bin/cod-server --routes > "$t/routes"
rc=0
OA_BASE=$B OA_CLIENT_TOKEN=T OA_WORKER_TOKEN=W OA_ROUTES="$t/routes" OA_DOC=api/openapi.json \
    OA_DATA="$t/data" OA_MODULES="$PWD/$MODULES" node tests/openapi/check.mjs || rc=$?
stop_server
exit $rc
