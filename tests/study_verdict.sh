#!/usr/bin/env bash
# The studies' verdict rule (studies/verdict.py) on cases worked out by hand.
# With three seeds (2 degrees of freedom) Student's t has closed forms:
# P(|T| ≥ t) = 1 − t/√(t² + 2), and P(T ≥ t) is half that for t ≥ 0.
#  A = 0.05, 0.04, 0.06: mean 0.05, sd 0.01, se 0.01/√3 = 0.005774,
#    t = 8.660, p = 1 − 8.660/√77 = 0.0131; 95 % interval ± 4.303 se:
#    [0.0252, 0.0748]; TOST against ±0.01: P(T ≤ (0.05 − 0.01)/se = 6.928)
#    = 1 − (1 − 6.928/√50)/2 = 0.990: a difference, no equivalence;
#  B = 0.001, 0.002, 0.003: mean 0.002, se 0.000577, t = 3.464,
#    p = 1 − 3.464/√14 = 0.0742; TOST: P(T ≤ (0.002 − 0.01)/se = −13.86)
#    = (1 − 13.86/√194)/2 = 0.00259: within noise (equivalent);
#  C = 0.040, 0.022, −0.006 (the recipe study's gap under the paper's
#    recipe): mean 0.01867, sd 0.02318, se 0.01338, t = 1.395,
#    p = 1 − 1.395/√3.946 = 0.298; TOST 1 − (1 − 0.6476/√2.419)/2 = 0.708:
#    unresolved (neither shown: not "no effect");
#  E = 0.05, 0.03, 0.04: t = 6.928, p = 1 − 6.928/√50 = 0.0202, a
#    difference alone; in a family with C and B, Holm multiplies the
#    smallest p by 3: 0.0606, no longer shown, while B's TOST p × 2 or 3
#    (0.0078) still shows its equivalence;
#  both = 0.004, 0.005, 0.006: p = 0.0131 as A's, TOST P(T ≤ −8.660)
#    = (1 − 8.660/√77)/2 = 0.00654: a difference smaller than the margin;
#  one value: n = 1, no interval, no verdict drawn.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-verdict-XXXXXX)
trap 'rm -rf "$t"' EXIT
v=studies/verdict.py
has() { grep -qF -- "$2" "$1" || { echo "  not in $1:"; sed 's/^/    /' "$1"; return 1; }; }
python3 "$v" A=0.05,0.04,0.06 > "$t/a.txt" 2>&1
check "verdict: a difference shown, its interval and both tests (A)" \
    has "$t/a.txt" "A: +0.0500 nats [+0.0252, +0.0748], n = 3, p = 0.013, TOST ±0.01: p = 0.99 (one test): B lower"
python3 "$v" B=0.001,0.002,0.003 > "$t/b.txt" 2>&1
check "verdict: within noise only by the equivalence test (B: p = 0.074, TOST p = 0.0026)" \
    has "$t/b.txt" "B: +0.0020 nats [-0.0005, +0.0045], n = 3, p = 0.074, TOST ±0.01: p = 0.0026 (one test): within noise (equivalent within ±0.01 nats)"
python3 "$v" C=0.040,0.022,-0.006 > "$t/c.txt" 2>&1
check "verdict: neither shown is unresolved, not 'no effect' (C: p = 0.3, TOST p = 0.71)" \
    has "$t/c.txt" "C: +0.0187 nats [-0.0389, +0.0763], n = 3, p = 0.3, TOST ±0.01: p = 0.71 (one test): unresolved"
python3 "$v" E=0.05,0.03,0.04 C=0.040,0.022,-0.006 B=0.001,0.002,0.003 > "$t/family.txt" 2>&1
check "verdict: Holm over a family of three: E's p = 0.02 becomes 0.061, unresolved" \
    has "$t/family.txt" "E: +0.0400 nats [+0.0152, +0.0648], n = 3, p = 0.02, TOST ±0.01: p = 0.98 (Holm over 3: p = 0.061, TOST p = 1): unresolved"
check "verdict: Holm over the family: B's equivalence still shown (TOST p 0.0026 × 3 = 0.0078)" \
    has "$t/family.txt" "(Holm over 3: p = 0.15, TOST p = 0.0078): within noise (equivalent within ±0.01 nats)"
python3 "$v" -x E=0.05,0.03,0.04 C=0.040,0.022,-0.006 B=0.001,0.002,0.003 > "$t/explore.txt" 2>&1
check "verdict: a comparison marked exploratory stays out of the family, and says so" \
    bash -c "grep -qF 'E: +0.0400 nats [+0.0152, +0.0648], n = 3, p = 0.02, TOST ±0.01: p = 0.98 (exploratory, uncorrected): B lower' '$t/explore.txt' &&
             grep -qF '(Holm over 2: p = 0.15, TOST p = 0.0052)' '$t/explore.txt'"
python3 "$v" both=0.004,0.005,0.006 > "$t/both.txt" 2>&1
check "verdict: a difference and an equivalence both shown: a real difference below the margin" \
    has "$t/both.txt" "both: +0.0050 nats [+0.0025, +0.0075], n = 3, p = 0.013, TOST ±0.01: p = 0.0065 (one test): B lower, by less than ±0.01 nats"
python3 "$v" one=-0.0142 none= > "$t/one.txt" 2>&1
check "verdict: one pair is n = 1, its value reported with no interval; none is not measured" \
    bash -c "grep -qxF 'one: -0.0142 nats (n = 1: no interval)' '$t/one.txt' && grep -qxF 'none: not measured' '$t/one.txt'"
python3 "$v" --margin 0.05 A=0.05,0.04,0.06 > "$t/margin.txt" 2>&1
check "verdict: the margin stated; at the mean itself TOST's p is 0.5" \
    has "$t/margin.txt" "TOST ±0.05: p = 0.5 (one test): B lower"
python3 "$v" A=0.05,x > "$t/bad.txt" 2>&1
rc=$?
check "verdict: a value that is no number refused, naming it" \
    bash -c "[ $rc -ne 0 ] && grep -qF \"verdict: '0.05,x' in 'A=0.05,x' is not numbers\" '$t/bad.txt'"
