#!/usr/bin/env python3
"""MMLU-shaped synthetic items for the evaluation's GPU timing
(bench/gpu/eval.sh): MMLU's 57 subjects with their test split's item
counts (14,042 in all) and 5 dev items each, in the cais/mmlu layout
({question, subject, choices, answer}). The text is random English words,
so nothing of MMLU's content is here, only its shape: each subject's
5-shot prompts average the characters that subject's do (published means
for the first 14; the rest estimated, then all scaled so that the mean
prompt is 3,212 characters, the published mean of MMLU's 5-shot prompts,
EvalScope's MMLU page), items varying around it (log-normal, sigma 0.35,
prompts capped at 14,626 characters, the published maximum).
usage: mmlu_synth.py OUT_DIR  (writes OUT_DIR/mmlu_test.jsonl, mmlu_dev.jsonl)"""
import json
import math
import random
import sys

# subject: (test items, mean 5-shot prompt characters)
SUBJECTS = {
    "abstract_algebra": (100, 1257), "anatomy": (135, 1446), "astronomy": (152, 2617),
    "business_ethics": (100, 2756), "clinical_knowledge": (265, 1681),
    "college_biology": (144, 2105), "college_chemistry": (100, 1800),
    "college_computer_science": (100, 3425), "college_mathematics": (100, 1973),
    "college_medicine": (173, 2378), "college_physics": (102, 1941),
    "computer_security": (100, 1599), "conceptual_physics": (235, 1341),
    "econometrics": (114, 2286), "electrical_engineering": (145, 1500),
    "elementary_mathematics": (378, 1600), "formal_logic": (126, 2700),
    "global_facts": (100, 1500), "high_school_biology": (310, 2200),
    "high_school_chemistry": (203, 2100), "high_school_computer_science": (100, 3000),
    "high_school_european_history": (165, 12000), "high_school_geography": (198, 1500),
    "high_school_government_and_politics": (193, 2200), "high_school_macroeconomics": (390, 1900),
    "high_school_mathematics": (270, 1900), "high_school_microeconomics": (238, 1900),
    "high_school_physics": (151, 2500), "high_school_psychology": (545, 1900),
    "high_school_statistics": (216, 3200), "high_school_us_history": (204, 10500),
    "high_school_world_history": (237, 9500), "human_aging": (223, 1400),
    "human_sexuality": (131, 1500), "international_law": (121, 2700),
    "jurisprudence": (108, 2000), "logical_fallacies": (163, 1800),
    "machine_learning": (112, 2300), "management": (103, 1200), "marketing": (234, 1900),
    "medical_genetics": (100, 1400), "miscellaneous": (783, 1200),
    "moral_disputes": (346, 2100), "moral_scenarios": (895, 2900), "nutrition": (306, 2000),
    "philosophy": (311, 1600), "prehistory": (324, 2000), "professional_accounting": (282, 3300),
    "professional_law": (1534, 6500), "professional_medicine": (272, 5500),
    "professional_psychology": (612, 2500), "public_relations": (110, 1800),
    "security_studies": (245, 5000), "sociology": (201, 2000),
    "us_foreign_policy": (100, 1900), "virology": (166, 1600), "world_religions": (171, 1100),
}
MEAN_PROMPT, MAX_PROMPT, SIGMA = 3212, 14626, 0.35
WORDS = ("the of and to in is was for that on as with by at from this which be are it an or "
         "not have has had its were their been more one all would there other who into two "
         "most some time these may than only new also after such first any over state between "
         "under government system economic political social theory function energy cell "
         "process following example increase equation probability distribution argument "
         "statement patient treatment disease court defendant contract evidence property "
         "revolution century empire population measure value market demand supply interest "
         "temperature pressure velocity molecule reaction structure protein organism "
         "development behavior memory research analysis approximately significant relative "
         "primary individual particular according because however although therefore "
         "whereas 1848 19th 3.5 42 0.01 x^2 f(x) n").split()


def text(rng, chars):
    out, n = [], 0
    while n < chars:
        w = rng.choice(WORDS)
        if rng.random() < 0.08:
            w += rng.choice(",.;:")
        out.append(w)
        n += len(w) + 1
    s = " ".join(out)
    return s[0].upper() + s[1:]


def item(rng, subject, block):
    """A question and four choices of about `block` characters in all."""
    choices = [text(rng, max(3, block * rng.uniform(0.04, 0.12))) for _ in range(4)]
    q = text(rng, max(10, block - sum(len(c) + 4 for c in choices) - 8)) + "?"
    return {"question": q, "subject": subject, "choices": choices, "answer": rng.randrange(4)}


def main():
    out = sys.argv[1]
    rng = random.Random(20240101)
    total = sum(n for n, _ in SUBJECTS.values())
    raw_mean = sum(n * m for n, m in SUBJECTS.values()) / total
    scale = MEAN_PROMPT / raw_mean
    with open(f"{out}/mmlu_test.jsonl", "w") as test, open(f"{out}/mmlu_dev.jsonl", "w") as dev:
        for subject, (n, mean) in SUBJECTS.items():
            # a prompt is the description (about 90 characters) and six blocks
            block = (mean * scale - 90) / 6
            for _ in range(5):
                dev.write(json.dumps(item(rng, subject, block)) + "\n")
            for _ in range(n):
                b = block * math.exp(rng.gauss(-SIGMA * SIGMA / 2, SIGMA))
                b = min(b, (MAX_PROMPT - 90 - 5 * block) / 1.0)
                test.write(json.dumps(item(rng, subject, max(40, b))) + "\n")
    print(f"wrote {total} test items of {len(SUBJECTS)} subjects and {5 * len(SUBJECTS)} dev items "
          f"to {out}")


if __name__ == "__main__":
    main()
