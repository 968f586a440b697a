#!/usr/bin/env bash
# The recipe study's reading (studies/recipe/gap.py) on report folders whose
# cells.csv is written here, with gaps worked out by hand:
#  - a recipe's gap per seed (LNS − Pre-LN, perplexity and nats), its mean
#    and paired t-test; a seed with a cancelled run left out and named;
#  - another recipe's change from the first, seed by seed;
#  - seeds added by a later sweep ("A+B"): the finished runs stand in for
#    the cancelled ones, and the three seeds are tested together;
#  - two finished runs of one norm and seed refused, naming the folders.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-gap-XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t"/today "$t"/today-3 "$t"/paper
head=experiment,group,norm,seed,state,diverged,step,eval_ppl,eval_loss,reason
cat > "$t/today/cells.csv" <<EOF
$head
1,0,pre,1,succeeded,false,100,4.80,1.5686,
2,1,lns,1,succeeded,false,100,5.08,1.6253,
3,0,pre,2,succeeded,false,100,4.78,1.5644,
4,1,lns,2,succeeded,false,100,4.94,1.5974,
5,0,pre,3,cancelled,false,30,,,
6,1,lns,3,cancelled,false,30,,,
EOF
cat > "$t/today-3/cells.csv" <<EOF
$head
7,0,pre,3,succeeded,false,100,4.70,1.5476,
8,1,lns,3,succeeded,false,100,4.90,1.5892,
EOF
cat > "$t/paper/cells.csv" <<EOF
$head
9,0,pre,1,succeeded,false,100,5.00,1.6094,
10,1,lns,1,succeeded,false,100,5.00,1.6094,
11,0,pre,2,succeeded,false,100,5.10,1.6292,
12,1,lns,2,succeeded,false,100,5.05,1.6194,
EOF
cd "$t" || exit 1
gap=$OLDPWD/studies/recipe/gap.py
has() { grep -qF -- "$2" "$1" || { echo "  not in $1:"; sed 's/^/    /' "$1"; return 1; }; }
python3 "$gap" today paper > two.txt 2>&1
check "gap.py: today's gap by seed, its mean and test, seed 3 (cancelled) left out" \
    has two.txt "LNS − Pre-LN (ppl): +0.220 [-0.542, +0.982], p = 0.17, within seed noise (by seed 1: +0.280, 2: +0.160); seeds 3 left out"
check "gap.py: the gap in nats" \
    has two.txt "LNS − Pre-LN (nats): +0.045 [-0.106, +0.195], p = 0.16, within seed noise (by seed 1: +0.057, 2: +0.033)"
check "gap.py: the paper's recipe's change from today's, seed by seed" \
    has two.txt "its change from today (ppl): -0.245 [-0.690, +0.200], p = 0.09, within seed noise (by seed 1: -0.280, 2: -0.210); seeds 3 left out"
python3 "$gap" today+today-3 paper > three.txt 2>&1
check "gap.py today+today-3: seed 3's finished runs stand in for the cancelled ones; three seeds, LNS behind" \
    has three.txt "LNS − Pre-LN (ppl): +0.213 [+0.062, +0.365], p = 0.026, LNS behind (by seed 1: +0.280, 2: +0.160, 3: +0.200)"
python3 "$gap" today+today-3+today-3 paper > twice.txt 2>&1
rc=$?
check "gap.py: two finished runs of one norm and seed refused (exit 1), naming the folders" \
    bash -c "[ $rc = 1 ] && grep -qF 'gap: today+today-3+today-3 holds two finished pre runs of seed 3' twice.txt"
