"""Which tokenisation the ``bm25`` system uses, by measured recall on glasshouse v0.1's core tier:
for each candidate, the share of the questions with evidence turns that get at least one of them in
BM25's top 10 (memeval's index: bm25s lucene, k1 1.5, b 0.75; questions asked as glasshouse asks).

    .venv/bin/python benchmarks/bm25_tokenisers.py [--glasshouse DIR]

The target (issue 22) is glasshouse's own tokenisation's 51.9%. Deterministic: one run.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bm25s  # noqa: E402

from memeval.audit.difficulty import glasshouse_folder  # noqa: E402
from memeval.bench.io import read_questions, read_turns  # noqa: E402
from memeval.systems.baselines import top_k_positive  # noqa: E402
from memeval.systems.bm25_index import TokenCache, build_index  # noqa: E402
from memeval.text.tokens import BM25_STOPWORDS, bm25_tokens, word_tokens  # noqa: E402

#: glasshouse v0.1 bm25_baseline.py's stop words (a fact of its tokenisation)
GH_STOP = frozenset(
    "the a an of in on at to for is was were are did do does and or that this with it they them their he "
    "his she her i my you your we our be been have has had there from what how when where which who why s t".split()
)
BM25S_STOP = frozenset(bm25s.stopwords.STOPWORDS_EN)
_ASCII = re.compile(r"[a-z0-9]+")


def _long(words: list[str]) -> list[str]:
    return [w for w in words if len(w) > 1 or not w.isascii()]


def _plural(words: list[str]) -> list[str]:
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words]


CANDIDATES = {
    "Unicode words, bm25s's stop words (bm25 version 1)": lambda s: word_tokens(s, BM25S_STOP),
    "the same, one-character ASCII tokens dropped": lambda s: _long(word_tokens(s, BM25S_STOP)),
    "Unicode words, no stop words, one-character ASCII dropped": lambda s: _long(word_tokens(s)),
    "glasshouse's bm25_baseline.py (ASCII [a-z0-9]+, > 1 char, its stop words)": lambda s: [
        w for w in _ASCII.findall(s.lower()) if len(w) > 1 and w not in GH_STOP
    ],
    "Unicode words, glasshouse's stop words, one-character ASCII dropped": lambda s: _long(word_tokens(s, GH_STOP)),
    "Unicode words, glasshouse's stop words, every token kept": lambda s: word_tokens(s, GH_STOP),
    "Unicode words, both stop lists, one-character ASCII dropped (bm25_tokens, chosen)": bm25_tokens,
    "the chosen, plural s stripped": lambda s: _plural(bm25_tokens(s)),
    "the chosen, single digits kept": lambda s: [
        w for w in word_tokens(s, BM25_STOPWORDS) if len(w) > 1 or not w.isascii() or w.isdigit()
    ],
}


def evidence_in_top10(turns, questions, tokenize) -> tuple[int, int]:
    cache = TokenCache(tokenize)
    index = build_index(cache, [cache.add(t.text) for t in turns])
    hit = n = 0
    for q in questions:
        if not q.evidence_turns:
            continue
        n += 1
        words = cache.query_tokens(q.text_to_ask)
        picked = {turns[int(i)].turn_id for i in top_k_positive(index.get_scores(words), 10)} if words else set()
        hit += bool(picked & set(q.evidence_turns))
    return hit, n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--glasshouse", type=Path, default=glasshouse_folder())
    a = ap.parse_args()
    turns = read_turns(a.glasshouse / "glasshouse_v0.1_core.jsonl")
    questions = read_questions(a.glasshouse / "questions_core.jsonl")
    print("| tokenisation | evidence in top 10 |")
    print("|---|---|")
    for name, tokenize in CANDIDATES.items():
        hit, n = evidence_in_top10(turns, questions, tokenize)
        print(f"| {name} | {hit}/{n} = {100 * hit / n:.1f}% |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
