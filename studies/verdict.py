#!/usr/bin/env python3
"""The studies' verdicts, by a rule rather than by prose.

A comparison is a list of paired differences A − B (one a seed, in nats
of held-out loss: the unit in which a margin means the same at every
perplexity). Its verdict follows from its numbers alone:

- "n = 1" (or "not measured" at none): no interval, so neither a
  difference nor an equivalence can be shown; the one value is reported,
  never read as a result;
- "A lower" / "B lower": the two-sided paired t-test (n − 1 degrees of
  freedom) rejects a zero difference at the 5 % level, after Holm's
  correction over the reading's family;
- "within noise (equivalent within ±MARGIN)": the two one-sided tests
  (TOST) reject both "the difference is at most −MARGIN" and "at least
  +MARGIN" at the 5 % level, after Holm's correction, on the same
  comparison's own paired noise (its differences' deviation); both the
  difference and the equivalence can be shown at once (a real difference
  smaller than the margin);
- "unresolved": neither is shown. A p ≥ 0.05 is never read as "no
  effect": an interval wide enough to hold both zero and the margin says
  nothing either way.

Several comparisons in one reading are one family: each test's p is
Holm-adjusted over it (the two kinds of test, difference and
equivalence, each over the family). A comparison marked exploratory
stays out of the family and says so ("exploratory, uncorrected").

MARGIN (default 0.01 nats, about 1 % of perplexity) is stated with every
verdict; a reading may state another.

usage: verdict.py [--margin M] [-x] LABEL=D1,D2,... ...
    (a family of comparisons, by hand; -x marks the next one exploratory)
"""
import math
import statistics
import sys

MARGIN = 0.01
ALPHA = 0.05


def beta_cf(a, b, x):
    """The regularized incomplete beta's continued fraction (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 301):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def beta_reg(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * beta_cf(a, b, x) / a
    return 1 - front * beta_cf(b, a, 1 - x) / b


def t_two_sided(t, df):
    """P(|T| ≥ |t|) for Student's t with df degrees of freedom."""
    return 0.0 if math.isinf(t) else beta_reg(df / 2, 0.5, df / (df + t * t))


def t_upper(t, df):
    """P(T ≥ t), one-sided."""
    half = t_two_sided(t, df) / 2
    return half if t >= 0 else 1 - half


def t_critical(p, df):
    """t with P(|T| ≥ t) = p."""
    lo, hi = 0.0, 1.0
    while t_two_sided(hi, df) > p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided(mid, df) > p else (lo, mid)
    return (lo + hi) / 2


def holm(ps):
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out


class Comparison:
    """Paired differences A − B in nats, and their tests."""

    def __init__(self, label, diffs, a="A", b="B", exploratory=False):
        self.label, self.a, self.b, self.exploratory = label, a, b, exploratory
        self.d = [float(v) for v in diffs]
        self.n = len(self.d)
        self.mean = statistics.mean(self.d) if self.d else None
        self.p = self.p_tost = self.lo = self.hi = None
        self.p_adj = self.p_tost_adj = None
        self.family = 1
        self.verdict = "not measured" if self.n == 0 else "n = 1"

    def test(self, margin):
        """the unadjusted tests; False where there is no interval"""
        if self.n < 2:
            return False
        df, sd = self.n - 1, statistics.stdev(self.d)
        se = sd / math.sqrt(self.n)
        if se == 0:
            self.lo = self.hi = self.mean
            self.p = 1.0 if self.mean == 0 else 0.0
            self.p_tost = 0.0 if abs(self.mean) < margin else 1.0
            return True
        half = t_critical(ALPHA, df) * se
        self.lo, self.hi = self.mean - half, self.mean + half
        self.p = t_two_sided(self.mean / se, df)
        # H0: mean ≤ −margin (rejected by a large t), H0: mean ≥ +margin (by a small one)
        self.p_tost = max(t_upper((self.mean + margin) / se, df),
                          1 - t_upper((self.mean - margin) / se, df))
        return True


def judge(comparisons, margin=MARGIN):
    """Each comparison's tests and verdict; the family is every tested
    comparison not marked exploratory."""
    family = [c for c in comparisons if c.test(margin) and not c.exploratory]
    for c, p, q in zip(family, holm([c.p for c in family]), holm([c.p_tost for c in family])):
        c.p_adj, c.p_tost_adj, c.family = p, q, len(family)
    for c in comparisons:
        if c.p is None:
            continue
        if c.exploratory:
            c.p_adj, c.p_tost_adj = c.p, c.p_tost
        lower = f"{c.a} lower" if c.mean < 0 else f"{c.b} lower"
        differs, same = c.p_adj < ALPHA, c.p_tost_adj < ALPHA
        if differs and same:
            c.verdict = f"{lower}, by less than ±{margin:g} nats"
        elif differs:
            c.verdict = lower
        elif same:
            c.verdict = f"within noise (equivalent within ±{margin:g} nats)"
        else:
            c.verdict = "unresolved"
    return comparisons


def describe(c, margin=MARGIN, digits=3):
    """one line: the mean, its interval and tests, and the verdict"""
    if c.n == 0:
        return "not measured"
    if c.p is None:
        return f"{c.mean:+.{digits}f} nats (n = 1: no interval)"
    if c.exploratory:
        holm_note = "exploratory, uncorrected"
    elif c.family > 1:
        holm_note = f"Holm over {c.family}: p = {c.p_adj:.2g}, TOST p = {c.p_tost_adj:.2g}"
    else:
        holm_note = "one test"
    return (f"{c.mean:+.{digits}f} nats [{c.lo:+.{digits}f}, {c.hi:+.{digits}f}], n = {c.n}, "
            f"p = {c.p:.2g}, TOST ±{margin:g}: p = {c.p_tost:.2g} ({holm_note}): {c.verdict}")


def main(args):
    margin = MARGIN
    if args[:1] == ["--margin"]:
        margin, args = float(args[1]), args[2:]
    if not args:
        sys.exit("usage: verdict.py [--margin M] [-x] LABEL=D1,D2,... ...")
    cs, exploratory = [], False
    for arg in args:
        if arg == "-x":
            exploratory = True
            continue
        label, eq, values = arg.partition("=")
        if not eq:
            sys.exit(f"verdict: '{arg}' is not LABEL=D1,D2,...")
        try:
            d = [float(v) for v in values.split(",") if v]
        except ValueError:
            sys.exit(f"verdict: '{values}' in '{arg}' is not numbers separated by commas")
        cs.append(Comparison(label, d, exploratory=exploratory))
        exploratory = False
    for c in judge(cs, margin):
        print(f"{c.label}: {describe(c, margin, 4)}")


if __name__ == "__main__":
    main(sys.argv[1:])
