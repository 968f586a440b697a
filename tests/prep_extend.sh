#!/usr/bin/env bash
# The extended corpus's documents (prep/corpus_extend.js and its
# extractors) from small inputs shaped like its sources (no network): the
# default corpus kept with its split; a document, fortune or sentence met
# twice (whitespace aside) kept once, against the default corpus too; every
# tenth document of the first sources held out, whole, and of the later
# ones those whose name hashes to 0 mod 10, none of them also trained on;
# the kernel's translations and the fortunes' pictures left out; the World
# English Bible one document per book. For each later extractor: what it
# keeps (the definitions, the commentary, the ham's own words, the story,
# the manuals' prose) and what it drops (pronunciations and source tags,
# repeated notes and tables, headers, quotes, signatures and spam, markup
# and names, code blocks, literal blocks, tables and synopses), and a
# paragraph seen anywhere before left out. The MANIFEST names every file
# with its sha256; the JSON lines hold every document of their split, one
# valid {"text": ...} each, through xz. Also: scripts/corpus.sh refuses a
# CORPUS it does not know, and corpus_extend.js a source, naming it.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-extend.XXXXXX)
trap "${KEEP:+:} rm -rf $t" EXIT
mkdir -p "$t/default/train" "$t/default/val" "$t/fortunes" "$t/doc/translations/zh_CN" "$t/doc/admin-guide" "$t/nlp"
printf 'A default training document.\n' >"$t/default/train/gutenberg-a.txt"
printf 'A default held-out document.\n\nIts second paragraph is long enough to be kept as prose here.\n' >"$t/default/val/sotu-b.txt"
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

# dictd: a .dict.dz (gzip) and its index, offsets and lengths in base64 digits
mkdir -p "$t/gcide" "$t/foldoc" "$t/wordnet"
dictd() { # DIR NAME, entries on stdin separated by lines "@@"
    node -e '
        const fs = require("fs"), zlib = require("zlib");
        const [dir, name] = process.argv.slice(1), B = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const b64 = (n) => { let s = ""; do { s = B[n % 64] + s; n = Math.floor(n / 64); } while (n); return s; };
        let data = "", index = "";
        for (const e of fs.readFileSync(0, "utf8").split("@@\n")) {
            index += e.split(/[ \n]/)[0] + "\t" + b64(Buffer.byteLength(data)) + "\t" + b64(Buffer.byteLength(e)) + "\n";
            data += e;
        }
        fs.writeFileSync(dir + "/" + name + ".dict.dz", zlib.gzipSync(data));
        fs.writeFileSync(dir + "/" + name + ".index", index);' "$@"
}
dictd "$t/gcide" gcide <<'EOF'
00-database-info
This file was converted from the original database.
@@
Abdomen \Ab*do"men\, n. [L. abdomen (a word of uncertain
   etymol.): cf. F. abdomen.]
   1. (Anat.) The belly, or that part of the body between the
      thorax and the pelvis.
      [1913 Webster]

   2. (Zool.) The posterior section of the body, behind the
      thorax, in insects.
      [1913 Webster]
@@
EOF
dictd "$t/foldoc" foldoc <<'EOF'
actor

   1. <programming> In {object-oriented} programming, an {object}
   which exists as a {concurrent} process, said the author.

   {(http://example.org/actors)}.

   (1994-11-08)
@@
EOF
printf '  1 This software and database is being provided to you, the LICENSEE\n' >"$t/wordnet/data.noun"
printf '00976953 04 n 02 foray 0 raid 0 001 @ 00975452 n 0000 | a sudden short attack made on the enemy camp; "they made a foray"  \n' >>"$t/wordnet/data.noun"
for pos in verb adj adv; do : >"$t/wordnet/data.$pos"; done

# a commentary: a note on two verses exported twice, an outline table
cat >"$t/mhcc.imp" <<'EOF'
$$$[ Testament 1 Heading ]
<milestone type="x-importer"/>
$$$Genesis 1:1
<div sID="g1" type="x-p"/><hi type="bold">Verses 1-2</hi> <div eID="g1" type="x-p"/> <div sID="g2" type="x-p"/>The first verse of the Bible gives us a satisfying account of the origin.<div eID="g2" type="x-p"/><table><row><cell>1-2</cell></row></table>
$$$Genesis 1:2
<div sID="g1" type="x-p"/><hi type="bold">Verses 1-2</hi> <div eID="g1" type="x-p"/> <div sID="g2" type="x-p"/>The first verse of the Bible gives us a satisfying account of the origin.<div eID="g2" type="x-p"/><table><row><cell>1-2</cell></row></table>
$$$Genesis 2:1
<div sID="g3" type="x-p"/>After six days, God ceased from all works of creation &amp; rested.<div eID="g3" type="x-p"/>
EOF

# mail: a ham with everything that goes, a ham with HTML alone, a spam
mkdir -p "$t/mail/easy-ham-1" "$t/mail/easy-ham-2" "$t/mail/hard-ham-1" "$t/mail/spam-1"
cat >"$t/mail/easy-ham-1/00001.abc.txt" <<'EOF'
Return-Path: <someone@example.com>
From: Someone <someone@example.com>
Subject: Re: dialling in from the UK
Content-Type: text/plain; charset="iso-8859-1"
Content-Transfer-Encoding: quoted-printable

On Tue, 20 Aug 2002, Kevin wrote:
> how might i configure my laptop to dial in to a freebie isp?

Freeserve worked for me last summer, and the wizard has its settings caf=E9 style.
Write to someone@example.com or see http://example.com/isp for the details of it.

--=20
Someone, somewhere, with a signature of many words in it
EOF
printf 'From: a@example.com\nContent-Type: text/html\n\n<p>Only HTML in this message, which goes away whole.</p>\n' >"$t/mail/hard-ham-1/00002.def.txt"
printf 'From: spam@example.com\n\nBuy cheap pills now from our online shop today.\n' >"$t/mail/spam-1/00003.ghi.txt"

# the games: WML and Endless Sky's data
mkdir -p "$t/wesnoth/Test_Campaign/scenarios" "$t/es"
cat >"$t/wesnoth/Test_Campaign/scenarios/01_Start.cfg" <<'EOF'
[scenario]
    name= _ "The Start Of It All"
    [part]
        story= _ "Long ago, the kingdom of the north was ruled by a wise and ""gentle"" queen."
    [/part]
    [message]
        speaker=Konrad
        message= _ "We must <i>take control</i> of the island before the orcs arrive!"
    [/message]
    [message]
        message= _ "You have $gold gold left in your treasury for the war."
    [/message]
[/scenario]
EOF
for i in $(seq 1 30); do
    printf '[message]\n    message= _ "Scenario number %d has a story of its own to tell."\n[/message]\n' "$i" \
        >"$t/wesnoth/Test_Campaign/scenarios/s$i.cfg"
done
printf 'mission "Intro"\n\tconversation\n\t\t`\tYou find <first> <last> walking among the fleet of ships.`\n\t\t`Captain <last> says the <ship> needs new engines soon.`\n\t\t`Pay <payment> at <planet> for the cargo you are carrying.`\n\t\t"Falcon"\n' >"$t/es/intro missions.txt"
printf 'mission "Job"\n\tdescription "Carry these many tons of cargo to the planet for pay."\n' >"$t/es/jobs.txt"

# the manuals: rst, pod, asciidoc, html
mkdir -p "$t/py/library" "$t/pod" "$t/git" "$t/html/book"
cat >"$t/py/library/thing.rst.txt" <<'EOF'
:mod:`thing` --- Things
=======================

The :func:`make` function builds a thing from its parts, as ``make(x)`` shows here.

For example::

    if this is literal code it must go away from the prose

.. code-block:: python

   print("this is a code block that must go away too")

>>> make(1) is not None and the doctest line must go away
True

=====  =====
A      B
=====  =====
cell   words in a table row that must not stay
=====  =====

.. note::

   A note's body is prose and stays in the document here.
EOF
cat >"$t/pod/perlthing.pod" <<'EOF'
=head1 NAME

perlthing - a thing

=head1 DESCRIPTION

The B<thing> function returns a C<< $value >> that L<perlfunc|perlfunc/thing> describes in full.

    my $verbatim = "code that goes away from the text";

=cut
EOF
cat >"$t/git/git-thing.txt" <<'EOF'
git-thing(1)
============

SYNOPSIS
--------
[verse]
'git thing' [--verbose] <path> and other options that go away

DESCRIPTION
-----------
The `git thing` command updates the files, as linkgit:git-config[1] explains at length.

----
$ git thing --all of the listing block goes away from it
----

--verbose::
	Be verbose about everything that the command does here.
EOF
cat >"$t/html/book/ch01.html" <<'EOF'
<html><head><title>Page title words that go</title></head><body>
<nav><p>Navigation words that should not be kept at all</p></nav>
<main><h1>A heading of several words that goes</h1>
<p>The book explains <code>Vec</code> and its many uses &amp; friends in this chapter.</p>
<pre><code>fn main() { println!("a code listing of several words"); }</code></pre>
<table><tr><td>a table cell of several words that goes</td></tr></table>
<p>Its second paragraph is long enough to be kept as prose here.</p>
</main></body></html>
EOF

# manual pages (roff, gzipped), a module's POD among its code, Crawl's entries
mkdir -p "$t/manpages/usr/share/man/man2" "$t/pm/File" "$t/crawl"
gzip -c >"$t/manpages/usr/share/man/man2/thing.2.gz" <<'EOF'
.\" a comment that goes
.TH THING 2
.SH NAME
thing \- make a thing
.SH SYNOPSIS
.nf
.B int thing(int fd, const char *name);
.fi
Feature test macro requirements for glibc are listed in another manual.
.SH DESCRIPTION
.BR thing ()
makes a thing out of \fIname\fP and returns it to the caller\(emat once.
.TP
.B EACCES
Permission to make the thing was denied to the caller here.
.EX
An example of plain words in a block of its own goes away.
.EE
EOF
printf '.so man2/thing.2\n' | gzip >"$t/manpages/usr/share/man/man2/alias.2.gz"
cat >"$t/pm/File/Thing.pm" <<'EOF'
package File::Thing;
my $code = "that is not POD and must go away from the text";

=head1 DESCRIPTION

This module makes things of files, as I<many> modules before it did well.

=cut

sub thing { return "more code that must go away from it"; }
EOF
printf '%%%%%%%%\n# comment\nAgnes\n\nThis spriggan is aged and weathered\nfrom years of travel.\n%%%%%%%%\n' >"$t/crawl/monsters.txt"

node prep/corpus_extend.js "$t/out" "$t/default" fortunes="$t/fortunes" jargon="$t/jargon.txt.gz" devil="$t/devil.dict.dz" \
    web="$t/web.imp" linux-doc="$t/doc" nlp-corpus="$t/nlp" gcide="$t/gcide" foldoc="$t/foldoc" wordnet="$t/wordnet" \
    mhcc="$t/mhcc.imp" spam-assassin="$t/mail" wesnoth="$t/wesnoth" endless-sky="$t/es" python-doc="$t/py" \
    perl-doc="$t/pod" git-doc="$t/git" rust-doc="$t/html/book" perl-modules="$t/pm" manpages="$t/manpages" \
    crawl="$t/crawl" >"$t/log" 2>&1
check "corpus_extend.js runs" test $? = 0
o=$t/out
one() { cat "$o"/*/"$1"; } # a document's text, whichever split holds it
check "the default corpus keeps its documents and split" \
    bash -c "cmp -s '$t/default/train/gutenberg-a.txt' '$o/train/gutenberg-a.txt' && cmp -s '$t/default/val/sotu-b.txt' '$o/val/sotu-b.txt'"
check "fortunes: each once, the pictures left out" \
    bash -c "[ \"\$(cat '$o'/*/fortunes-wisdom.txt)\" = \"\$(printf 'First fortune.\n\nSecond  fortune.')\" ] &&
             [ \"\$(cat '$o'/*/fortunes-work.txt)\" = 'A third one.' ] && ! ls '$o'/*/fortunes-ascii-art.txt 2>/dev/null"
check "the World English Bible: a document per book, verses in order" \
    bash -c "[ \"\$(cat '$o'/*/web-00-Genesis.txt)\" = \"\$(printf 'In the beginning.\nThe earth.')\" ] && [ -f '$o/train/web-01-Exodus.txt' ]"
check "the kernel's documents: a copy of a default document left out, the translations too" \
    bash -c "[ \$(ls '$o'/*/linux-doc-* | wc -l) = 20 ] && ! grep -rq '内核' '$o' && ! ls '$o'/*/linux-doc-*copy* 2>/dev/null"
check "every tenth document of a first source held out (2 of the kernel's 20)" \
    test "$(ls "$o"/val/linux-doc-* | wc -l)" = 2
check "nlp-corpus: a sentence met twice kept once" \
    test "$(one nlp-corpus-000.txt)" = "$(printf 'One sentence.\n\nTwo sentences.')"
check "the Jargon File and the Devil's Dictionary unpacked" \
    bash -c "grep -q JARGON '$o'/*/jargon-jargon-file.txt && grep -q DEVIL '$o'/*/devil-devils-dictionary.txt"

check "GCIDE: headword and senses kept; pronunciation, etymology, source tags and info entries gone" \
    test "$(one gcide-gcide-0000.txt)" = 'Abdomen, n. 1. (Anat.) The belly, or that part of the body between the thorax and the pelvis. 2. (Zool.) The posterior section of the body, behind the thorax, in insects.'
check "FOLDOC: subject tags, URLs, dates and braces gone" \
    test "$(one foldoc-foldoc-0000.txt)" = 'actor 1. In object-oriented programming, an object which exists as a concurrent process, said the author.'
check "WordNet: the synset's words and its gloss, the licence lines and pointers gone" \
    test "$(one wordnet-noun-0000.txt)" = 'foray, raid (noun): a sudden short attack made on the enemy camp; "they made a foray"'
check "a commentary: a document per chapter, a note exported twice kept once, tables and markup gone" \
    bash -c "[ \"\$(cat '$o'/*/mhcc-0000-Genesis_001.txt)\" = \"\$(printf 'Verses 1-2\n\nThe first verse of the Bible gives us a satisfying account of the origin.')\" ] &&
             [ \"\$(cat '$o'/*/mhcc-0001-Genesis_002.txt)\" = 'After six days, God ceased from all works of creation & rested.' ]"
check "mail: the ham's own words, decoded; headers, quotes, addresses, URLs, signature, HTML-only mail and spam gone" \
    bash -c "[ \"\$(ls '$o'/*/spam-assassin-*)\" = \"\$(ls '$o'/*/spam-assassin-easy-ham-1-00001.txt)\" ] &&
             [ \"\$(cat '$o'/*/spam-assassin-easy-ham-1-00001.txt)\" = 'Freeserve worked for me last summer, and the wizard has its settings café style. Write to or see for the details of it.' ]"
check "Wesnoth: story and messages, markup off, names and strings with variables gone" \
    test "$(one wesnoth-Test_Campaign_scenarios_01_Start.txt)" = "$(printf 'Long ago, the kingdom of the north was ruled by a wise and "gentle" queen.\n\nWe must take control of the island before the orcs arrive!')"
check "Endless Sky: conversation lines, the player named, other placeholders and the jobs' files gone" \
    bash -c "[ \"\$(cat '$o'/*/endless-sky-intro_missions.txt)\" = \"\$(printf 'You find Alex Reyes walking among the fleet of ships.\n\nCaptain Reyes says the Aurora needs new engines soon.')\" ] &&
             ! ls '$o'/*/endless-sky-jobs.txt 2>/dev/null"
check "reStructuredText: prose and a note's body; headings, literal and code blocks, doctests and tables gone" \
    test "$(one python-doc-library_thing.txt)" = "$(printf 'The make function builds a thing from its parts, as make(x) shows here.\n\nA note'"'"'s body is prose and stays in the document here.')"
check "POD: text paragraphs with their codes taken off; commands and verbatim paragraphs gone" \
    test "$(one perl-doc-perlthing.txt)" = 'The thing function returns a $value that perlfunc describes in full.'
check "a module's POD: its text kept, its code gone" \
    test "$(one perl-modules-File_Thing.txt)" = 'This module makes things of files, as many modules before it did well.'
check "manual pages: the description, fonts and escapes off; NAME's line, SYNOPSIS, tags, examples and .so pages gone" \
    bash -c "[ \"\$(cat '$o'/*/manpages-manpages-man2_thing.2.txt)\" = \"\$(printf 'thing() makes a thing out of name and returns it to the caller—at once.\n\nPermission to make the thing was denied to the caller here.')\" ] &&
             ! ls '$o'/*/manpages-manpages-man2_alias* 2>/dev/null"
check "Crawl: an entry's text, its key and comments gone" \
    test "$(one crawl-monsters-0000.txt)" = 'This spriggan is aged and weathered from years of travel.'
check "AsciiDoc: prose; the synopsis, listing blocks, option terms and headings gone" \
    test "$(one git-doc-git-thing.txt)" = "$(printf 'The git thing command updates the files, as git-config explains at length.\n\nBe verbose about everything that the command does here.')"
check "HTML: the page's <main> prose; navigation, headings, code listings and tables gone; a paragraph seen before gone" \
    test "$(one rust-doc-book-ch01.txt)" = 'The book explains Vec and its many uses & friends in this chapter.'

hashed_val() { # whether SOURCE/NAME hashes to 0 mod 10
    [ $((16#$(printf '%s' "$1" | sha256sum | cut -c1-8) % 10)) = 0 ]
}
check "a later source's held-out documents are those whose name hashes to 0 mod 10" bash -c "
    $(declare -f hashed_val)
    n=0
    for f in '$o'/*/wesnoth-*.txt; do
        b=\$(basename \"\$f\" .txt); name=\${b#wesnoth-}
        if hashed_val \"wesnoth/\$name\"; then want=val; n=\$((n + 1)); else want=train; fi
        [ \"\$(basename \"\$(dirname \"\$f\")\")\" = \$want ] || exit 1
    done
    [ \$n -gt 0 ] && [ \$n -lt 31 ]"
check "a held-out document is in no training file" \
    bash -c "for f in '$o'/val/*; do grep -v '^\$' \"\$f\" | grep -rqxF -f - '$o/train' && exit 1; done; exit 0"
check "the MANIFEST names every document with its sha256" \
    bash -c "[ \$(wc -l < '$o/MANIFEST') = \$(find '$o/train' '$o/val' -type f | wc -l) ] && (cd '$o' && sha256sum -c --quiet MANIFEST)"

for split in train val; do
    node prep/corpus_jsonl.js "$o" $split "$t/$split.jsonl" >/dev/null && xz -9 "$t/$split.jsonl"
done
check "JSON lines through xz: one valid {\"text\"} per document of the split, in MANIFEST order, the same text" bash -c "
    for split in train val; do
        xz -dc '$t/'\$split.jsonl.xz | node -e '
            const fs = require(\"fs\"), path = require(\"path\");
            const [dir, split] = process.argv.slice(1);
            const want = fs.readFileSync(path.join(dir, \"MANIFEST\"), \"utf8\").split(\"\n\")
                .map((l) => l.slice(66)).filter((r) => r.startsWith(split + \"/\"));
            const got = fs.readFileSync(0, \"utf8\").split(\"\n\");
            if (got.pop() !== \"\" || got.length !== want.length || !want.length) process.exit(1);
            got.forEach((line, i) => {
                const o = JSON.parse(line);
                if (Object.keys(o).join() !== \"text\" || o.text !== fs.readFileSync(path.join(dir, want[i]), \"utf8\")) process.exit(1);
            });' '$o' \$split || exit 1
    done"
check "corpus_extend.js refuses an unknown source, naming it" \
    bash -c "node prep/corpus_extend.js '$t/out2' '$t/default' wikipedia='$t' 2>&1 | grep -q '\"wikipedia=$t\" is not SOURCE=PATH'"
check "scripts/corpus.sh refuses an unknown CORPUS, naming it" \
    bash -c "CORPUS=huge scripts/corpus.sh 2>&1 | grep -q 'CORPUS must be default or extended, not \"huge\"'"
