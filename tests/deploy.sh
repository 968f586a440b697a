#!/usr/bin/env bash
# Deployment as an admin meets it: `make install` into staging trees (PREFIX
# /usr and the default /usr/local), the installed tree, a reinstall that
# keeps the admin's settings, every program required; the installed units
# pass `systemd-analyze verify` (ExecStart checked against the staged
# programs, warnings count as failures) and an offline security review;
# and the installed units' command lines, expanded as systemd would, start
# cod-server (READY, WATCHDOG, STOPPING over NOTIFY_SOCKET, /healthz,
# SIGTERM) and a CPU worker that registers with it.
set -euo pipefail
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-deploy-XXXXXX)
bg=()
cleanup() {
    local p
    for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$t"
}
trap cleanup EXIT
programs=(cod-server cod-worker cod cod-train cod-prep cod-analyze)
units=(cod-server.service cod-worker@.service cod-worker-cpu.service)

# --- make install -------------------------------------------------------
if ! make -s install DESTDIR="$t/usr" PREFIX=/usr >"$t/install.log" 2>&1; then
    echo "FAIL make install PREFIX=/usr: $(tail -n 20 "$t/install.log")"
    exit 1
fi
echo "PASS make install PREFIX=/usr DESTDIR=..."

tree_ok() { # staging root, prefix: prints what is wrong, fails if anything is
    local root=$1 prefix=$2 bad=() p u exec
    for p in "${programs[@]}"; do
        [ -f "$root$prefix/bin/$p" ] && [ -x "$root$prefix/bin/$p" ] || bad+=("$prefix/bin/$p not executable")
    done
    for u in "${units[@]}"; do
        local f=$root$prefix/lib/systemd/system/$u
        [ -f "$f" ] || { bad+=("no $prefix/lib/systemd/system/$u"); continue; }
        exec=$(sed -n 's/^ExecStart=//p' "$f")
        case "$u" in cod-server*) p=cod-server ;; *) p=cod-worker ;; esac
        [[ "$exec" == "$prefix/bin/$p "* ]] || bad+=("$u: ExecStart=$exec")
        ! grep -q '@[A-Z]*@' "$f" || bad+=("$u: placeholder left")
    done
    grep -q "^EnvironmentFile=/etc/cod/worker.env$" "$root$prefix/lib/systemd/system/cod-worker@.service" ||
        bad+=("cod-worker@.service does not read /etc/cod/worker.env")
    grep -q "^LoadCredential=server.conf:/etc/cod/server.conf$" "$root$prefix/lib/systemd/system/cod-server.service" ||
        bad+=("cod-server.service does not load /etc/cod/server.conf")
    for p in etc/cod/server.conf etc/cod/worker.env; do
        [ "$(stat -c %a "$root/$p" 2>/dev/null)" = 600 ] || bad+=("/$p missing or not mode 600")
    done
    for p in lib/sysusers.d/cod.conf share/doc/cod/README.md share/doc/cod/docs/cluster.md \
        share/doc/cod/examples/server.conf share/doc/cod/examples/worker.env; do
        [ -f "$root$prefix/$p" ] || bad+=("no $prefix/$p")
    done
    grep -q '^# Running a cluster' "$root$prefix/share/doc/cod/docs/cluster.md" 2>/dev/null ||
        bad+=("the installed docs/cluster.md is not the cluster page")
    for u in cod-server.service cod-worker@.service cod-worker-cpu.service; do
        grep -qx "Documentation=file:$prefix/share/doc/cod/docs/cluster.md" \
            "$root$prefix/lib/systemd/system/$u" || bad+=("$u: Documentation= is not the installed cluster page")
    done
    [ ${#bad[@]} -eq 0 ] || { printf '  %s\n' "${bad[@]}"; return 1; }
}
check "PREFIX=/usr: programs, units naming /usr/bin, settings 0600, sysusers, docs" tree_ok "$t/usr" /usr

echo "# local change" >>"$t/usr/etc/cod/server.conf"
sed -i 's/^COD_SERVER=.*/COD_SERVER=http:\/\/kept.example:8470/' "$t/usr/etc/cod/worker.env"
make -s install DESTDIR="$t/usr" PREFIX=/usr >"$t/install2.log" 2>&1 || true
check "a reinstall keeps the admin's settings" bash -c "
    grep -q '^# local change' '$t/usr/etc/cod/server.conf' &&
    grep -q '^COD_SERVER=http://kept.example:8470' '$t/usr/etc/cod/worker.env' &&
    [ \"\$(stat -c %a '$t/usr/etc/cod/server.conf')\" = 600 ] &&
    grep -q 'keeping /etc/cod/server.conf' '$t/install2.log'"
check "a reinstall refreshes the examples in the docs" \
    cmp -s deploy/cod-server.example.conf "$t/usr/usr/share/doc/cod/examples/server.conf"

if make -s install DESTDIR="$t/local" >"$t/install3.log" 2>&1; then
    check "default PREFIX: everything under /usr/local, units naming /usr/local/bin" tree_ok "$t/local" /usr/local
else
    echo "FAIL make install with the default PREFIX: $(tail -n 20 "$t/install3.log")"
fi

# Every program or nothing: a tree without cod-prep is refused before any copy.
mkdir -p "$t/src/bin"
cp -r scripts deploy docs README.md "$t/src/"
for p in "${programs[@]}"; do [ "$p" = cod-prep ] || ln -s "$PWD/bin/$p" "$t/src/bin/$p"; done
rc=0
PREFIX=/usr DESTDIR="$t/partial" "$t/src/scripts/install.sh" >"$t/partial.log" 2>&1 || rc=$?
check "install.sh refuses a missing program, naming it, installing nothing" bash -c "
    [ $rc -ne 0 ] && grep -q 'bin/cod-prep' '$t/partial.log' && [ ! -e '$t/partial' ]"

# --- systemd-analyze ----------------------------------------------------
if ! command -v systemd-analyze >/dev/null; then
    echo "FAIL systemd-analyze not found (scripts/deps.sh test installs systemd)"
    exit 1
fi
# --root resolves unit names and ExecStart inside the staging tree; the
# targets the units name come from this machine's systemd.
for root in "$t/usr" "$t/local"; do
    mkdir -p "$root/usr/lib/systemd/system"
    cp -n /usr/lib/systemd/system/*.target "$root/usr/lib/systemd/system/" 2>/dev/null || true
done
# verify exits 0 on a misspelt directive or a bad value ("Unknown key ...,
# ignoring"): any output at all is a failure.
verify() { # root, unit...
    local root=$1 out rc=0
    shift
    out=$(systemd-analyze verify --man=no --root="$root" "$@" 2>&1) || rc=$?
    if [ $rc -ne 0 ] || [ -n "$out" ]; then
        printf '  %s\n' "$out"
        return 1
    fi
}
instances=(cod-server.service cod-worker@0.service cod-worker@7.service cod-worker-cpu.service)
check "systemd-analyze verify: units as installed with PREFIX=/usr" verify "$t/usr" "${instances[@]}"
check "systemd-analyze verify: units as installed with PREFIX=/usr/local" verify "$t/local" "${instances[@]}"
# The check itself must bite: a misspelt key, and an ExecStart whose program is gone.
cp -al "$t/usr" "$t/typo"
sed -i 's/^ProtectKernelLogs=/ProtectKernelLog=/' "$t/typo/usr/lib/systemd/system/cod-server.service"
refused() { ! verify "$@" >/dev/null; }
check "verify catches a misspelt directive" refused "$t/typo" cod-server.service
rm "$t/typo/usr/bin/cod-worker"
check "verify catches an ExecStart program that is not installed" refused "$t/typo" cod-worker@0.service

exposure() { # unit, most allowed (systemd's 0-10 scale): offline review of the installed unit
    local level
    level=$(systemd-analyze security --offline=yes --root="$t/usr" "$1" 2>&1 |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
    echo "  $1: exposure $level"
    [ -n "$level" ] && awk -v l="$level" -v m="$2" 'BEGIN { exit !(l <= m) }'
}
check "security review: cod-server exposure at most 1.5" exposure cod-server.service 1.5
check "security review: cod-worker@0 exposure at most 2.0" exposure cod-worker@0.service 2.0
check "security review: cod-worker-cpu exposure at most 2.0" exposure cod-worker-cpu.service 2.0

# --- the units' command lines, run as systemd would run them -------------
# ARGV and ENVV from a unit: Environment= then EnvironmentFile= (which wins),
# specifiers, ${VAR} as one word and $VAR split into words; every path is
# taken inside the staging root. Enough of systemd for these units.
mkdir -p "$t/var-lib" "$t/cache"
expand() { # staging root, unit file, instance, VAR=value preset by systemd...
    local root=$1 unit=$2 inst=$3 line w k ef host words
    shift 3
    host=$(uname -n)
    declare -A env=()
    spec() { local s=${1//%i/$inst}; s=${s//%H/$host}; s=${s//%S/$t/var-lib}; echo "${s//%C/$t/cache}"; }
    for kv in "$@"; do env[${kv%%=*}]=${kv#*=}; done
    while IFS= read -r line; do
        line=$(spec "${line#Environment=}")
        env[${line%%=*}]=${line#*=}
    done < <(grep '^Environment=' "$unit")
    ef=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")
    if [ -n "$ef" ]; then
        while IFS= read -r line; do
            [[ "$line" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] && env[${line%%=*}]=${line#*=}
        done <"$root$ef"
    fi
    ARGV=() ENVV=()
    for k in "${!env[@]}"; do ENVV+=("$k=${env[$k]}"); done
    read -ra words <<<"$(spec "$(sed -n 's/^ExecStart=//p' "$unit")")"
    for w in "${words[@]}"; do
        if [[ "$w" =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
            # shellcheck disable=SC2206 # split at whitespace, as systemd does
            ARGV+=(${env[${BASH_REMATCH[1]}]:-})
            continue
        fi
        while [[ "$w" =~ \$\{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
            k=${BASH_REMATCH[1]}
            w=${w//\$\{$k\}/${env[$k]:-}}
        done
        ARGV+=("$w")
    done
    ARGV[0]=$root${ARGV[0]}
}

unitdir=$t/usr/usr/lib/systemd/system
mkdir -p "$t/creds" "$t/var-lib/cod"
cp "$t/usr/etc/cod/server.conf" "$t/creds/server.conf"
# A datagram listener standing in for systemd's notify socket (perl-base
# is on every Debian system).
perl -MIO::Socket::UNIX -MSocket -e '
    my $s = IO::Socket::UNIX->new(Type => SOCK_DGRAM, Local => $ARGV[0]) or die "$ARGV[0]: $!";
    open(my $o, ">>", $ARGV[1]) or die; select($o); $| = 1;
    while (defined($s->recv(my $m, 4096))) { print "$m\n" }' "$t/notify" "$t/notify.log" &
bg+=("$!")
await "the notify socket" test -S "$t/notify"
expand "$t/usr" "$unitdir/cod-server.service" "" "CREDENTIALS_DIRECTORY=$t/creds"
wd=$(sed -n 's/^WatchdogSec=\([0-9]*\)s$/\1/p' "$unitdir/cod-server.service")
# The installed server.conf listens on 8470 with the database in
# /var/lib/cod; the environment (which beats the config file) moves both
# into the test's own places.
(
    cd "$t/var-lib/cod"
    export WATCHDOG_PID=$BASHPID
    exec env -i PATH=/usr/bin:/bin "${ENVV[@]}" NOTIFY_SOCKET="$t/notify" WATCHDOG_PID="$WATCHDOG_PID" \
        WATCHDOG_USEC=$((wd * 1000000)) COD_LISTEN=127.0.0.1:0 COD_DB="$t/var-lib/cod/cod.db" \
        COD_PORT_FILE="$t/port" "${ARGV[@]}"
) >"$t/server.log" 2>&1 &
server=$!
bg+=("$server")
# up: its port written and its first watchdog ping sent (or it is gone)
up_or_gone() { { [ -s "$t/port" ] && grep -q '^WATCHDOG=1' "$t/notify.log"; } || ! kill -0 "$server" 2>/dev/null; }
await "cod-server from its unit to write its port and ping the watchdog" up_or_gone
port=$(cat "$t/port" 2>/dev/null || echo 0)
check "cod-server from its unit's ExecStart and server.conf: READY=1 over NOTIFY_SOCKET" \
    grep -q '^READY=1$' "$t/notify.log"
check "cod-server under WatchdogSec=${wd}s sends WATCHDOG=1" grep -q '^WATCHDOG=1$' "$t/notify.log"
check "cod-server from its unit answers /healthz" bash -c "curl -sf 'http://127.0.0.1:$port/healthz' >/dev/null"

# The CPU worker's unit with the installed worker.env pointed at this server.
sed -i -e "s|^COD_SERVER=.*|COD_SERVER=http://127.0.0.1:$port|" \
    -e "s|^COD_WORK_DIR=.*|COD_WORK_DIR=$t/work|" "$t/usr/etc/cod/worker.env"
expand "$t/usr" "$unitdir/cod-worker-cpu.service" ""
env -i PATH=/usr/bin:/bin OMP_NUM_THREADS=1 "${ENVV[@]}" "${ARGV[@]}" >"$t/worker.log" 2>&1 &
worker=$!
bg+=("$worker")
name="$(uname -n)/cpu"
registered_or_gone() {
    [[ "$(curl -sf -m "$WAIT_LIMIT" "http://127.0.0.1:$port/v1/workers" 2>/dev/null)" == *"\"$name\""* ]] || ! kill -0 "$worker" 2>/dev/null
}
await "the CPU worker to register" registered_or_gone
check "cod-worker from cod-worker-cpu.service and worker.env registers as $name" bash -c \
    "curl -sf 'http://127.0.0.1:$port/v1/workers' | grep -qF '\"$name\"' && [ -d '$t/work' ]"
kill -TERM "$worker"
rc=0
wait "$worker" || rc=$?
check "the CPU worker stops on SIGTERM with exit 0" test $rc -eq 0

# GPU N: the instance reaches --device; whether a GPU is here or not, the
# command line itself is accepted (no usage error).
expand "$t/usr" "$unitdir/cod-worker@.service" 3
env -i PATH=/usr/bin:/bin "${ENVV[@]}" "${ARGV[@]}" >"$t/gpu.log" 2>&1 &
gpu=$!
bg+=("$gpu")
# it names its device as it starts (or as it refuses a machine without one)
named_or_gone() { grep -q 'cuda:3' "$t/gpu.log" || ! kill -0 "$gpu" 2>/dev/null; }
await "cod-worker@3 to name its device" named_or_gone
kill -TERM "$gpu" 2>/dev/null || true
wait "$gpu" || true
check "cod-worker@3's command line is accepted and asks for cuda:3" bash -c \
    "! grep -qiE 'usage|bad option|unexpected argument' '$t/gpu.log' && grep -q 'cuda:3' '$t/gpu.log'"

kill -TERM "$server"
rc=0
wait "$server" || rc=$?
check "cod-server stops on SIGTERM with exit 0 and STOPPING=1" bash -c \
    "[ $rc -eq 0 ] && grep -q '^STOPPING=1$' '$t/notify.log'"
expand "$t/usr" "$unitdir/cod-server.service" "" "CREDENTIALS_DIRECTORY=$t/creds"
rc=0
env -i "${ENVV[@]}" COD_DB="$t/var-lib/cod/cod.db" "${ARGV[@]}" --check-db >"$t/check.log" 2>&1 || rc=$?
check "cod-server --check-db with the unit's command line: the database it wrote is ok" bash -c \
    "[ $rc -eq 0 ] && [ \"\$(cat '$t/check.log')\" = ok ]"
