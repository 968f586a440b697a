#!/usr/bin/env bash
# The fleet simulator against a real cod-server (bench/bench_fleet.c):
#   bench/fleet.sh WORKERS DASHBOARDS SECONDS [GROUP_COMMIT] [SPREAD]
# on loopback, its own database in a temporary folder: heartbeats every 5 s,
# dashboards every 3 s, runs of 40 s ± SPREAD (0.5: 20-60 s; 0: all alike).
# FLEET_DIR: where the database goes (default /tmp; /dev/shm takes the disk
# out of the measure).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/server.bash
workers=${1:-1000} dashboards=${2:-10} seconds=${3:-30} gc=${4:-1} spread=${5:-0.5}
sd=$(mktemp -d "${FLEET_DIR:-/tmp}"/cod-bench-fleet-XXXXXX)
trap 'rm -rf "$sd"' EXIT
printf 'bench\n' > "$sd/text.txt"
head -c 30000 /dev/urandom | base64 >> "$sd/text.txt"
bin/cod-prep --tokenizer bytes --val-fraction 0 --out "$sd/data" "$sd/text.txt" >/dev/null 2>&1
printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, "data": {"train": "%s/data/train_*.bin", "val": "%s/data/train_*.bin"}, "train": {"steps": 1000}, "resources": {"device": "cuda"}}' "$sd" "$sd" > "$sd/spec.json"
# a connection per simulated worker and dashboard, on both sides
need=$((workers + dashboards + 1000)) hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$need" -le "$hard" ] || { echo "fleet.sh: $need open files needed, the hard limit is $hard" >&2; exit 2; }
ulimit -n "$need"
conns=$((workers + dashboards + 100))
# shellcheck disable=SC2086 # SERVER_ARGS: more settings, split as words
server_up --conn-limit "$conns" --per-ip-limit "$conns" --group-commit "$gc" ${SERVER_ARGS:-}
status=0
build/bench/bench_fleet "$port" "$sd/spec.json" "$workers" "$dashboards" "$seconds" 5 3 40 "$spread" || status=$?
server_down
[ "$status" = 0 ] || tail -20 "$sd/server.log" >&2
exit "$status"
