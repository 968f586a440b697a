#!/usr/bin/env bash
# Installs the Debian packages that building, testing and the demo need,
# and only those that are missing. Both README commands call it;
# `scripts/deps.sh test` adds what only the tests need (Chromium for the
# dashboard test).
set -euo pipefail
pkgs=(build-essential libopenblas-openmp-dev libjansson-dev libpcre2-dev libssl-dev libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev curl nodejs npm ca-certificates)
[ "${1:-}" = test ] && pkgs+=(chromium systemd)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm may come from elsewhere than Debian (the image's own node): accept a working npm.
if command -v npm >/dev/null 2>&1; then
    missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
want=()
for p in "${missing[@]}"; do [ -n "$p" ] && want+=("$p"); done
[ ${#want[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps: installing ${want[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${want[@]}"
