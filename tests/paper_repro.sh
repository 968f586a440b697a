#!/usr/bin/env bash
# docs/paper.md, "Reproducing the paper", run here up to its GPU step, so
# that the page cannot rot unseen. Its sh blocks are taken from the page as
# they stand and run in order in this shell, with only what this machine
# lacks swapped (each swap must find its text, or the test fails naming it):
#  - C4 and T5's spiece.model: a C4-shaped slice of the default corpus (two
#    train and two validation .json.gz files named as C4's, one
#    {"text", "timestamp", "url"} object a line) and a SentencePiece model
#    that spm_train makes here with T5's ids (unigram, pad 0, </s> 1, unk 2,
#    no <s>; 1,000 pieces): a stand-in, not T5's model;
#  - /srv/cod: a temporary folder; the server on a free port;
#  - the 8 GPU workers: one CPU worker;
#  - the 130M-350M sweep's sizes: two toy shapes on the CPU, 3 updates of
#    16 sequences (the rest of the paper's recipe as the page gives it).
# The 1B gang sweep is submitted as written: the server must queue it with
# the paper's 1B recipe as a gang of 8; no GPU here, so it is cancelled
# before its report. Last, the page's sweeps as written (paths aside)
# must queue every size with that size's recipe.
cd "$(dirname "$0")/.." && . tests/lib.sh
repo=$PWD
t=$(mktemp -d /tmp/cod-paper-repro.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$t"' EXIT
need_corpus
for tool in spm_train node; do
    command -v $tool >/dev/null || { echo "FAIL $tool is missing (scripts/deps.sh test installs it)"; exit 1; }
done

# The page's sh blocks, one file each
awk -v dir="$t" '/^```sh$/ { n++; out = dir "/block" n ".sh"; next }
    /^```$/ { out = ""; next }
    out != "" { print > out }' docs/paper.md
blocks=$(ls "$t"/block*.sh 2>/dev/null | wc -l)
check "docs/paper.md has its 4 command blocks" test "$blocks" = 4
[ "$blocks" = 4 ] || exit 1
swap() { # block old new: the old text must be there
    local f="$t/block$1.sh" s
    s=$(<"$f")
    [[ "$s" == *"$2"* ]] || { echo "FAIL docs/paper.md's block $1 no longer holds: $2"; exit 1; }
    printf '%s\n' "${s//"$2"/"$3"}" >"$f"
}

# C4's shape from the default corpus's Brown samples: documents of about 2 kB
# cut at paragraphs, NAME's N the file's number
cat >"$t/c4.js" <<'JS'
const fs = require("fs"), path = require("path"), zlib = require("zlib");
const [src, out, name, files, samples, per] = process.argv.slice(2);
const docs = [];
for (const f of fs.readdirSync(src).filter((f) => f.startsWith("brown-")).sort().slice(0, +samples)) {
    let cur = "";
    for (const p of fs.readFileSync(path.join(src, f), "utf8").split(/\n\s*\n/)) {
        if (cur && cur.length + p.length > 2000) { docs.push(cur); cur = ""; }
        cur += (cur ? "\n" : "") + p.trim();
    }
    if (cur) docs.push(cur);
}
for (let i = 0; i < +files; i++) {
    const lines = docs.slice(i * +per, (i + 1) * +per).map((text, j) => JSON.stringify({text,
        timestamp: `2019-04-${10 + (j % 18)}T12:${String(j % 60).padStart(2, "0")}:00Z`,
        url: `https://example.org/${i}/${j}`}));
    fs.writeFileSync(path.join(out, name.replace("N", String(i).padStart(5, "0"))), zlib.gzipSync(lines.join("\n") + "\n"));
}
JS
mkdir -p "$t/c4"
node "$t/c4.js" var/corpus/default/train "$t/c4" c4-train.N-of-01024.json.gz 2 80 300
node "$t/c4.js" var/corpus/default/val "$t/c4" c4-validation.N-of-00008.json.gz 2 30 20
ndocs() { cat "$@" | gzip -dc | wc -l; }
zcat "$t"/c4/c4-train.*.json.gz | node -e 'require("readline").createInterface({input: process.stdin})
    .on("line", (l) => console.log(JSON.parse(l).text))' >"$t/spm.txt"
(cd "$t" && spm_train --input=spm.txt --model_prefix=spiece --model_type=unigram --vocab_size=1000 \
    --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --minloglevel=2 >spm.log 2>&1)
check "the stand-ins: 4 C4-shaped files, a SentencePiece model with T5's ids" \
    bash -c "[ \$(ls '$t/c4' | wc -l) = 4 ] && [ -s '$t/spiece.model' ]"

swap 1 '00{000..149}' '00{000..001}'
swap 2 'cod-server --db /srv/cod/cod.db --data-root /srv/cod/data &' \
    'cod-server --db /srv/cod/cod.db --data-root /srv/cod/data --listen 127.0.0.1:0 --port-file /srv/cod/port --log-requests 0 2>/srv/cod/server.log &
pids+=($!); await "the port file" test -s /srv/cod/port'
swap 2 'http://127.0.0.1:8470' 'http://127.0.0.1:$(cat /srv/cod/port)'
swap 2 'for g in 0 1 2 3 4 5 6 7; do cod-worker --device cuda:$g --work-dir /srv/cod/work & done' \
    'cod-worker --device cpu --work-dir /srv/cod/work --wait 5 >/srv/cod/worker.log 2>&1 & pids+=($!)'
cp "$t/block3.sh" "$t/block3-as-written.sh"
toy='[{"dim": 32, "n_layers": 2, "n_heads": 2, "ffn_dim": 64}, {"dim": 32, "n_layers": 4, "n_heads": 2, "ffn_dim": 64}]'
swap 3 '--grid model=llama-130m,llama-250m,llama-350m' "--device cpu --steps 3 --batch 16 --grid model='$toy'"
for f in "$t"/block*.sh; do
    s=$(<"$f"); printf '%s\n' "${s//\/srv\/cod/$t/srv}" >"$f"
done

# block N: runs it in this shell, stopping at its first failing command,
# which a FAIL line names (on the test's own stdout, fd 3)
exec 3>&1
run_block() {
    blk=$1
    trap 'echo "FAIL docs/paper.md block $blk: \`$BASH_COMMAND\` exited $?" >&3' ERR
    set -eE -o pipefail
    # shellcheck disable=SC1090 # the page's block
    . "$t/block$1.sh"
    set +eE +o pipefail
    trap - ERR
}
export PATH="$repo/bin:$PATH"
cd "$t"
json() { node -e 'let s = ""; process.stdin.on("data", (d) => s += d)
    .on("end", () => { const j = JSON.parse(s); console.log(eval(process.argv[1])); })' "$1"; }

run_block 1 >"$t/prep.log" 2>&1
meta=$t/srv/data/c4-t5/meta.json
check "cod-prep: T5's </s> (1) after each document, pad 0, the stand-in's 1,000 pieces" \
    test "$(json '[j.tokenizer, j.doc_token, j.doc_token_at, j.pad_token, j.vocab_size].join(" ")' <"$meta")" = \
    "sentencepiece 1 end 0 1000"
check "cod-prep: the two validation files held out, both train files trained on, no line skipped" \
    test "$(json '[j.val.documents, j.train.documents, Object.values(j.input.lines_skipped).reduce((a, b) => a + b)].join(" ")' <"$meta")" = \
    "$(ndocs "$t"/c4/c4-validation.*) $(ndocs "$t"/c4/c4-train.*) 0"

run_block 2
check "cod-server answers, and the worker registered" poll bash -c "cod workers | grep -q cpu"

run_block 3 >"$t/sweeps.log"
spec_of() { curl -s "$COD_SERVER/v1/experiments/$1" | json "(j => $2)(j.spec)"; } # id, JS over the spec j
ids() { cod ls --sweep "$1" --all | awk 'NR > 1 { print $1 }' | sort -n; }
recipe='[j.model.embed_std, j.train.precision, j.data.packing, j.norm.gains, j.analysis.prune, j.analysis.angular,
         j.train.seq_len, j.train.batch_seqs, j.train.beta1, j.train.beta2, j.train.weight_decay, j.train.clip,
         j.train.min_lr_ratio, j.eval.every, j.eval.tokens, j.model.vocab].join(" ")'
paper_recipe="0.02 bf16 documents learned true true 256 512 0.9 0.999 0 0 0.1 1000 10000000 1000"
size='[j.model.preset, j.train.lr, j.train.steps, j.train.warmup, j.resources.device, j.resources.gpus, j.train.micro_batch].join(" ")'
# every cell's spec as "recipe | size" lines
cells() { local i; for i in $(ids "$1"); do echo "$(spec_of "$i" "$recipe") | $(spec_of "$i" "$size")"; done; }
cells 1 >"$t/cells1"
check "sweep 1: 2 toy sizes × 5 variants on the CPU, 3 updates of 16, the rest of the paper's recipe" \
    test "$(sort "$t/cells1" | uniq -c | sed 's/^ *//')" = \
    "10 ${paper_recipe/ 512 / 16 } | custom 0.001 3 0 cpu 1 16"
cells 2 >"$t/cells2"
check "sweep 2: llama-1b × 5 variants, each a gang of 8 with the paper's 1B recipe" \
    test "$(sort "$t/cells2" | uniq -c | sed 's/^ *//')" = "5 $paper_recipe | llama-1b 0.0005 100000 1000 cuda 8 32"
states() { cod ls --sweep "$1" --all | awk 'NR > 1 { print $6 }' | sort | uniq -c | sed 's/^ *//' | paste -sd' '; }
ended() { ! states "$1" | grep -qE 'queued|running'; }
await "sweep 1's runs to end" ended 1
check "sweep 1: every run succeeded on the CPU worker" test "$(states 1)" = "10 succeeded"
# the GPU step: none here, so the 1B gangs are cancelled unrun
for i in $(ids 2); do cod cancel "$i" >/dev/null; done

run_block 4 >"$t/reports.log"
col() { node -e 'const [h, ...rows] = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")
    .map((l) => l.split(",")); for (const r of rows) console.log(process.argv.slice(2).map((k) => r[h.indexOf(k)]).join(" "))' "$@"; }
check "Table 1 of sweep 1: the 5 variants × 2 sizes, each one finished run's perplexity" \
    test "$(col "$t/table1-130m-350m/table1.csv" norm n | sort | uniq -c | sed 's/^ *//' | paste -sd' ')" = \
    "2 deepnorm 1 2 lns 1 2 mixln 1 2 post 1 2 pre 1"
check "Table 1 of sweep 1: every perplexity a number above 1" \
    test "$(col "$t/table1-130m-350m/table1.csv" ppl_mean | awk '$1 > 1' | wc -l)" = 10
check "the reports: report.html with Table 1; the 1B gangs' 5 cells cancelled" \
    bash -c "grep -q 'Table 1' '$t/table1-130m-350m/report.html' && grep -q 'Table 1' '$t/table1-1b/report.html' &&
             [ \$(grep -c cancelled '$t/table1-1b/cells.csv') = 5 ]"

# the page's sweeps as written (paths aside) are sweeps 3 and 4: every
# size with its own recipe; then cancelled
run_block 3-as-written >"$t/as-written.log"
cells 3 >"$t/cells3"
check "docs/paper.md's 130M-350M sweep as written: 5 variants of each size, each with its recipe" \
    test "$(sed 's/.* | //' "$t/cells3" | sort | uniq -c | sed 's/^ *//' | paste -sd';')" = \
    "5 llama-130m 0.001 20000 2000 cuda 1 64;5 llama-250m 0.001 40000 4000 cuda 1 64;5 llama-350m 0.0005 60000 6000 cuda 1 64"
check "docs/paper.md's 130M-350M sweep as written: the paper's recipe in every cell" \
    test "$(sed 's/ | .*//' "$t/cells3" | sort -u)" = "$paper_recipe"
for s in 3 4; do for i in $(ids $s); do cod cancel "$i" >/dev/null; done; done
