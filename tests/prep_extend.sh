#!/usr/bin/env bash
# The extended corpus's documents (prep/corpus_extend.js) from small inputs
# shaped like its sources (no network): the default corpus kept with its
# split; a document, fortune or sentence met twice (whitespace aside) kept
# once, against the default corpus too; every tenth new document of a
# source held out, whole; the kernel's translations and the fortunes'
# pictures left out; the World English Bible one document per book; the
# MANIFEST naming every file with its sha256. Also: scripts/corpus.sh
# refuses a CORPUS it does not know, naming it.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-extend.XXXXXX)
trap "rm -rf $t" EXIT
mkdir -p "$t/default/train" "$t/default/val" "$t/fortunes" "$t/doc/translations/zh_CN" "$t/doc/admin-guide" "$t/nlp"
printf 'A default training document.\n' >"$t/default/train/gutenberg-a.txt"
printf 'A default held-out document.\n' >"$t/default/val/sotu-b.txt"
printf 'First fortune.\n%%\nSecond  fortune.\n%%\nFirst fortune.\n' >"$t/fortunes/wisdom"
printf 'Second fortune.\n%%\nA third one.\n' >"$t/fortunes/work"
printf '(o_o)\n%%\n' >"$t/fortunes/ascii-art"
printf 'index pointer\n' >"$t/fortunes/wisdom.dat"
printf 'JARGON: the Jargon File.\n' | gzip >"$t/jargon.txt.gz"
printf 'DEVIL: a dictionary.\n' | gzip >"$t/devil.dict.dz"
printf '$$$[ Module Heading ]\n\n$$$Genesis 1:1\nIn the beginning.\n$$$Genesis 1:2\nThe earth.\n$$$Exodus 1:1\nNow these.\n' >"$t/web.imp"
for i in $(seq 1 20); do printf 'Kernel document %d.\n' "$i" >"$t/doc/admin-guide/doc$i.rst.txt"; done
printf 'A default training document.\n' >"$t/doc/admin-guide/copy.rst.txt"
printf '内核文档\n' >"$t/doc/translations/zh_CN/index.rst.txt"
printf '["One sentence.", "Two sentences.", "One  sentence."]' >"$t/nlp/doc-0.json"
node prep/corpus_extend.js "$t/default" "$t/fortunes" "$t/jargon.txt.gz" "$t/devil.dict.dz" "$t/web.imp" \
    "$t/doc" "$t/nlp" "$t/out" >"$t/log" 2>&1
check "corpus_extend.js runs" test $? = 0
o=$t/out
check "the default corpus keeps its documents and split" \
    bash -c "cmp -s '$t/default/train/gutenberg-a.txt' '$o/train/gutenberg-a.txt' && cmp -s '$t/default/val/sotu-b.txt' '$o/val/sotu-b.txt'"
check "fortunes: each once, the pictures left out" \
    bash -c "[ \"\$(cat '$o'/*/fortunes-wisdom.txt)\" = \"\$(printf 'First fortune.\n\nSecond  fortune.')\" ] &&
             [ \"\$(cat '$o'/*/fortunes-work.txt)\" = 'A third one.' ] && ! ls '$o'/*/fortunes-ascii-art.txt 2>/dev/null"
check "the World English Bible: a document per book, verses in order" \
    bash -c "[ \"\$(cat '$o'/*/web-00-Genesis.txt)\" = \"\$(printf 'In the beginning.\nThe earth.')\" ] && [ -f '$o/train/web-01-Exodus.txt' ]"
check "the kernel's documents: a copy of a default document left out, the translations too" \
    bash -c "[ \$(ls '$o'/*/linux-doc-* | wc -l) = 20 ] && ! grep -rq '内核' '$o' && ! ls '$o'/*/linux-doc-*copy* 2>/dev/null"
check "every tenth new document of a source held out (2 of the kernel's 20)" \
    test "$(ls "$o"/val/linux-doc-* | wc -l)" = 2
check "a held-out document is in no training file" \
    bash -c "for f in '$o'/val/*; do grep -rqxF -f \"\$f\" '$o/train' && exit 1; done; exit 0"
check "nlp-corpus: a sentence met twice kept once" \
    test "$(cat "$o"/*/nlp-corpus-000.txt)" = "$(printf 'One sentence.\n\nTwo sentences.')"
check "the Jargon File and the Devil's Dictionary unpacked" \
    bash -c "grep -q JARGON '$o'/*/jargon-jargon-file.txt && grep -q DEVIL '$o'/*/devil-devils-dictionary.txt"
check "the MANIFEST names every document with its sha256" \
    bash -c "[ \$(wc -l < '$o/MANIFEST') = \$(find '$o/train' '$o/val' -type f | wc -l) ] && (cd '$o' && sha256sum -c --quiet MANIFEST)"
check "scripts/corpus.sh refuses an unknown CORPUS, naming it" \
    bash -c "CORPUS=huge scripts/corpus.sh 2>&1 | grep -q 'CORPUS must be default or extended, not \"huge\"'"
