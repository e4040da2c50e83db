"""memeval's LongMemEval-V2 scorers beside the repository's own ``evaluation/qa_eval_metrics.py``,
run in the same process on generated (response, gold, eval_function) cases.

The official file is fetched, never shipped: give its path (one way: ``git -C <clone of
xiaowu0162/LongMemEval-V2> show HEAD:evaluation/qa_eval_metrics.py > /tmp/qa_eval_metrics.py``).

    .venv/bin/python benchmarks/lme_v2_scorer_parity.py --official /tmp/qa_eval_metrics.py [--cases 20000] [--seed 0]

Per case the official side does what ``evaluation/harness.py`` does for a deterministic function
(``extract_boxed_answer`` on the full response, ``eval_from_spec`` on the extracted answer,
``score_to_bool``, UNKNOWN wrong) and memeval's side calls ``memeval.scoring.lme_v2.official_score``.
An exception on either side is the outcome ``error``; cases agree when the outcomes are equal. A
second family compares judge-reply parsing (``_parse_llm_binary_judgement`` vs
``lme_v2.parse_judgement``: the label, or ``error`` / None). Prints a Markdown table and the first
disagreements.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
from collections import Counter
from pathlib import Path

from memeval.bench.model import Question
from memeval.scoring import lme_v2

WORDS = [
    "invoice",
    "Hold",
    "ship",
    "re-order",
    "blue_kettle",
    "$29.99",
    "A",
    "B",
    "c",
    "D",
    "Option",
    "choice",
    "and",
    "unknown",
    "UNKNOWN",
    "Answer:",
    "final",
    "(A)",
    "B.",
    "x-y",
    "priority 2",
    "Impact",
    "urgency",
    "café",
    "ß",
    "it's",
    "e.g.",
    "{x}",
    "ab",
    "abc",
]
SEPS = [",", ";", ", ", "; ", " / ", " "]
FUNCS = list(lme_v2.FUNCTIONS)
BAD_FUNCS = ["exact_match", "", "llm_gotchas_checker"]
OPTIONS = {  # function -> options it takes
    "norm_phrase_set_match": [
        "separators=;",
        "separators=/",
        "separators=",
        'separators=[";", "/"]',
        "lower=false",
        "normalize_hyphen=false",
        "strip_punct=false",
        "strip_punct=0",
        "require_non_empty=false",
    ],
    "mc_choice_match": ["strip_chars=.()", "strip_chars=", "require_non_empty=false", "separators=;"],
    "mc_choice_set_match": ["require_non_empty=false", "lower=false"],
}
OPTIONS["norm_phrase_set_match_ordered"] = OPTIONS["norm_phrase_set_match"]
#: options the published code refuses (a parse error, or a TypeError in the function)
BAD_OPTIONS = [
    "separators=[bad",
    "separators=true",
    "strip_chars=1",
    "strip_chars=none",
    "separator=;",
    "foo=bar",
    "x",
    "=1",
]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("official_qa_eval_metrics", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _phrase(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


def _gold(rng: random.Random) -> str:
    k = rng.randint(0, 3)
    if k == 0:
        return rng.choice(["", "A", "a, c", "B; D", "unknown"])
    return rng.choice(SEPS).join(_phrase(rng) for _ in range(k))


def _response(rng: random.Random, gold: str) -> str:
    body = rng.choice([gold, gold.upper(), _phrase(rng), gold.replace(",", " and "), " ".join(reversed(gold.split()))])
    style = rng.randint(0, 6)
    if style == 0:
        return body
    if style == 1:
        return f"Reasoning. \\boxed{{{body}}}"
    if style == 2:
        return f"\\boxed{{{_phrase(rng)}}} then \\boxed{{{body}}}"
    if style == 3:
        return "\\boxed{UNKNOWN}" if rng.random() < 0.7 else "\\boxed{ unknown }"
    if style == 4:
        return f"\\boxed{{ {body} {{nested}} }}"
    if style == 5:
        return f"\\boxed{{{body}"  # unclosed
    return f"\\boxed{{}} {body}"


def _spec(rng: random.Random) -> str:
    """Nine in ten specs well formed (a published function, options it takes); the rest malformed."""
    if rng.random() < 0.9:
        name = rng.choice(FUNCS)
        opts = rng.sample(OPTIONS[name], rng.choice([0, 0, 0, 1, 1, 2]))
        return "|".join([name, *opts])
    name = rng.choice(FUNCS + BAD_FUNCS)
    return "|".join([name, *rng.sample(BAD_OPTIONS, rng.choice([0, 1, 2]))])


def official_outcome(m, spec: str, response: str, gold: str):
    try:
        parsed = m.extract_boxed_answer(response)
        ok = m.score_to_bool(m.eval_from_spec(spec, parsed, gold))
        return float(ok and not m.is_unknown(parsed))
    except Exception:
        return "error"


def memeval_outcome(spec: str, response: str, gold: str):
    q = Question("q", "BASIC", "?", gold_answer=gold, extra={"eval_function": spec, "lme_v2": True})
    try:
        o = lme_v2.official_score(q, response)
    except lme_v2.EvalSpecError:
        return "error"
    return "error" if o.score is None else o.score


REPLIES = [
    '{"label": 1, "reason": "x"}',
    '```json\n{"label": 0}\n```',
    "{'label': 1}",
    "label = 0",
    "Label: 1",
    '{"label": 2}',
    '{"label": "1"}',
    "yes",
    "",
    '{"label": 1',
    'text {"label": 0, "reason": "a"} more {"b": 1}',
    '```\n{"label": 1}\n```',
    '"label" : 0',
    "[1]",
    '{"reason": "no label", "label": null} label=1',
]


def official_label(m, text: str):
    try:
        return m._parse_llm_binary_judgement(text)[0]
    except Exception:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official", required=True, type=Path, help="path to a fetched qa_eval_metrics.py")
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    m = _load(args.official)
    rng = random.Random(args.seed)
    agree, outcomes, worst = 0, Counter(), []
    for _ in range(args.cases):
        gold = _gold(rng)
        spec, resp = _spec(rng), _response(rng, gold)
        a, b = official_outcome(m, spec, resp, gold), memeval_outcome(spec, resp, gold)
        outcomes[str(a)] += 1
        if a == b:
            agree += 1
        elif len(worst) < 10:
            worst.append((spec, resp, gold, a, b))
    j_agree, j_n = 0, 0
    for _ in range(max(1000, args.cases // 10)):
        t = rng.choice(REPLIES) if rng.random() < 0.8 else rng.choice(REPLIES) + " " + rng.choice(REPLIES)
        j_n += 1
        j_agree += official_label(m, t) == lme_v2.parse_judgement(t)
    print("| family | cases | agree | agreement | official outcomes |")
    print("|---|---:|---:|---:|---|")
    dist = ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items()))
    print(
        f"| deterministic eval_function on the boxed answer | {args.cases} | {agree} | {agree / args.cases:.2%} | {dist} |"
    )
    print(f"| judge-reply label parsing | {j_n} | {j_agree} | {j_agree / j_n:.2%} | |")
    for spec, resp, gold, a, b in worst:
        print(f"- disagree: spec={spec!r} response={resp!r} gold={gold!r}: official {a}, memeval {b}")


if __name__ == "__main__":
    main()
