# Shared helpers for the shell tests: each check prints one PASS/FAIL line.
# Not a test itself (tests/run.sh runs tests/*.sh except this file).
check() { # name, then a command that must succeed
    local name=$1; shift
    if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fi
}
# The default corpus, fetched and tokenized once (idempotent).
need_corpus() {
    [ -f var/data/default-bytes/meta.json ] || scripts/corpus.sh >/dev/null || {
        echo "FAIL corpus: scripts/corpus.sh failed"; exit 1; }
}
# metric values of one name from a metrics.jsonl, one per line
values() { grep "\"name\": \"$2\"" "$1" | sed 's/.*"value": \([^}]*\)}/\1/'; }
