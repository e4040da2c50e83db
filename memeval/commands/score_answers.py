"""``memeval score-answers``: score one answer set ``{test_id: answer}`` on the book suite, case by case.

memeval score-answers --suite DIR --answers FILE [--metric keyword-recall|judge] [--out FILE]
"""

from __future__ import annotations

import argparse

from ..atomic import write_jsonl
from ..bench.loaders.booksuite import read_answers
from ..scoring.booksuite_scores import JUDGE, format_cases, format_table, layer_table, score_answer_sets
from .compare import _note_ungraded, add_judge_arguments, add_suite_arguments, make_judge, suite_from_args

__all__ = ["HELP", "add_arguments", "run"]

HELP = "score one answer set {test_id: answer} on the book suite (per-case table and summary)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_suite_arguments(p)
    p.add_argument("--answers", required=True, metavar="FILE", help="{test_id: answer}")
    p.add_argument("--name", default="answers", help="system name for the summary and --out records")
    add_judge_arguments(p)


def run(args) -> int:
    suite, known = suite_from_args(args)
    answers = read_answers(args.answers, known)
    judge = make_judge(args) if args.metric == JUDGE else None
    scores = score_answer_sets(suite, {args.name: answers}, args.metric, judge, progress=_note_ungraded)
    print(format_cases(scores))
    print()
    print(format_table(layer_table(scores, [args.name]), args.metric, scores))
    unscored = sorted(set(answers) - {s.test_id for s in scores})
    if unscored:
        print(f"not scored (no gold facts for {args.metric}): {len(unscored)} answered case(s)")
    if args.out:
        write_jsonl(args.out, (s.to_dict() for s in scores))
    return 0
