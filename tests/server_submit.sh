#!/usr/bin/env bash
# cod-server checks a submission's data without reading a token: a shard
# whose header says a billion tokens (a sparse file: no disk behind it) is
# accepted as fast as a small one, and a token id outside the spec's vocab
# at its very end goes unseen (a scan would refuse it, 422 naming
# model.vocab). Reading every token is the worker's job (trainer/data_check).
# What the server does check stays checked: a bad header, a size that does
# not match it, and meta.json's vocabulary.
cd "$(dirname "$0")/.." && . tests/server_helpers.bash
make_data
start_server
err_names() { # name, expected status, got status, text the error must contain
    if [ "$3" = "$2" ] && grep -q '"error":{' "$t/body" && grep -qF -- "$4" "$t/body"; then
        echo "PASS $1"; else echo "FAIL $1 (status $3): $(cat "$t/body")"; fi
}
# shard FILE TOKENS: an llm.c uint16 shard header (magic 20240520 =
# 0x0134d888, version 1, the count) and a file of that many tokens, sparse.
shard() {
    local n=$2
    { printf '\x88\xd8\x34\x01\x01\x00\x00\x00'
      printf "\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8 & 255)))"
      printf "\\x$(printf %02x $((n >> 16 & 255)))\\x$(printf %02x $((n >> 24 & 255)))"
      head -c 1012 /dev/zero; } > "$1"
    truncate -s $((1024 + 2 * n)) "$1"
}
vspec() { # train glob, vocab
    printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64, "vocab": %d}, "data": {"train": "%s", "val": "%s"}, "train": {"steps": 10, "seq_len": 16, "batch_seqs": 2, "micro_batch": 2}}' \
        "$2" "$1" "$1"
}
submit() { # body: prints "status seconds"
    wcurl -s -m "$WAIT_LIMIT" -o "$t/body" -w '%{http_code} %{time_total}' -X POST "$B/v1/experiments" --data-binary "$1"
}

mkdir -p "$t/small" "$t/big"
shard "$t/small/train_000.bin" 4096
shard "$t/big/train_000.bin" 1000000000
# the last token of the billion: 65535, outside vocab 300
printf '\xff\xff' | dd of="$t/big/train_000.bin" bs=1 seek=$((1024 + 2 * 999999999)) conv=notrunc status=none
check "the big shard is sparse (under 1 MB on disk, 2 GB long)" \
    bash -c "[ \$(du -k '$t/big/train_000.bin' | cut -f1) -lt 1024 ] && [ \$(stat -c %s '$t/big/train_000.bin') = 2000001024 ]"

# The server's CPU time so far (user + system, in clock ticks): reading 2 GB
# costs it seconds of CPU, checking a header next to none, however busy the
# machine (which makes wall-clock times useless for telling them apart).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SPID/stat"; }
read -r code_small s_small < <(submit "$(vspec "$t/small/train_*.bin" 300)")
c0=$(cpu_ticks)
read -r code_big s_big < <(submit "$(vspec "$t/big/train_*.bin" 300)")
c1=$(cpu_ticks)
is "a small shard without meta.json: 201" "$code_small" 201
is "a billion tokens without meta.json: 201 (the token outside the vocab is not read)" "$code_big" 201
echo "  submit: small shard ${s_small}s, a billion tokens ${s_big}s ($((c1 - c0)) ticks of the server's CPU)"
check "a billion tokens cost the server under 0.2 s of CPU: the tokens are not read" \
    [ $((c1 - c0)) -lt $(($(getconf CLK_TCK) / 5)) ]
check "the stored spec leaves the vocab as given" grep -q '"vocab":300' "$t/body"

# what the server still checks, from the header and the size alone
shard "$t/small/val_bad.bin" 4096
truncate -s 2048 "$t/small/val_bad.bin"
code=$(req POST /v1/experiments "$(vspec "$t/small/*.bin" 300)")
err_names "a size that does not match the header: 422 naming the file" 422 "$code" "val_bad.bin: file size does not match"
printf 'not a shard at all, but long enough to hold a header%01024d' 0 > "$t/small/val_bad.bin"
code=$(req POST /v1/experiments "$(vspec "$t/small/*.bin" 300)")
err_names "a bad magic: 422 naming data.train" 422 "$code" '"field":"data.train"'
rm "$t/small/val_bad.bin"
echo '{"vocab_size": 50257}' > "$t/small/meta.json"
code=$(req POST /v1/experiments "$(vspec "$t/small/train_*.bin" 300)")
err_names "meta.json's vocabulary over the spec's: 422 naming model.vocab" 422 "$code" '"field":"model.vocab"'
code=$(req POST /v1/experiments "$(printf '{"model": {"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, "data": {"train": "%s", "val": "%s"}}' "$t/small/train_*.bin" "$t/small/train_*.bin")")
check "a spec without vocab takes meta.json's" bash -c "[ $code = 201 ] && grep -q '\"vocab\":50257' '$t/body'"
stop_server
