"""``memeval compare``: the book suite's layer x system table over canned answer sets.

    memeval compare --suite DIR [--responses FILE] [--metric keyword-recall|judge] [--out FILE]

``--responses`` is ``{system: {test_id: answer}}`` (default: ``DIR/fixtures/system_responses.example.json``
); ``--run [NAME=]RUN_DIR`` adds the answers of a ``memeval run`` over the imported suite, named NAME
(default: its system spec), so two runs of one system compare side by side.
Keyword recall needs no network and scores the cases that have gold facts; the judge metric grades every
answered case with the rubric judge (``--judge-url``/``--judge-model``; key from ``--judge-key-env``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..atomic import write_jsonl
from ..bench.loaders.booksuite import LAYERS, BookSuite, answers_from_run, load_booksuite, read_responses
from ..errors import InputError
from .run import add_cache_arguments
from ..run.records import read_records
from ..run.folder import read_manifest
from ..scoring.booksuite_scores import (
    JUDGE,
    KEYWORD_RECALL,
    format_table,
    keyword_scores_from_records,
    layer_table,
    score_answer_sets,
)

__all__ = [
    "HELP",
    "add_arguments",
    "run",
    "add_suite_arguments",
    "add_judge_arguments",
    "make_judge",
    "suite_from_args",
    "run_name",
]

HELP = "compare answer sets on the book suite by layer (keyword recall or rubric judge)"


def add_suite_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", required=True, metavar="DIR", help="book suite folder (test_cases/, fixtures/)")
    p.add_argument("--gold", metavar="FILE", help="gold facts (default DIR/fixtures/gold_facts.json)")
    p.add_argument("--metric", choices=(KEYWORD_RECALL, JUDGE), default=KEYWORD_RECALL)
    p.add_argument("--category", choices=LAYERS, help="only this layer")
    p.add_argument("--out", metavar="FILE", help="write one JSON line per scored case here")


def add_judge_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("judge (for --metric judge)")
    g.add_argument("--judge-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    g.add_argument("--judge-model", help="judge model name")
    g.add_argument(
        "--judge-key-env",
        default="OPENAI_API_KEY",
        help="environment variable holding the API key (sent only as a header)",
    )
    g.add_argument(
        "--judge-json-mode",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ask for response_format json_object (turn off for servers that reject it)",
    )
    add_cache_arguments(g)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_suite_arguments(p)
    p.add_argument(
        "--responses",
        metavar="FILE",
        help="{system: {test_id: answer}} (default DIR/fixtures/system_responses.example.json), or "
        "the book's single-system batch file {test_id: answer}, named by its file stem",
    )
    p.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="RUN_DIR",
        help="also compare a memeval run over the imported suite, as NAME=RUN_DIR or RUN_DIR (named by its "
        "system spec); repeatable; added to the --responses answer sets",
    )
    p.add_argument("--systems", nargs="+", metavar="NAME", help="only these systems, in this order")
    add_judge_arguments(p)


def suite_from_args(args) -> tuple[BookSuite, set[str]]:
    """The suite (restricted to ``--category``) and every test id it knows (for validating answers)."""
    suite = load_booksuite(args.suite, args.gold)
    known = {c.test_id for c in suite.cases}
    if args.category:
        suite = BookSuite(suite.root, tuple(c for c in suite.cases if c.layer == args.category), suite.gold)
    return suite, known


def make_judge(args):
    from ..llm import ChatClient
    from ..scoring.rubric import RubricJudge
    from .run import model_cache

    if not args.judge_url or not args.judge_model:
        raise InputError("<command line>", None, "--judge-url/--judge-model", "required with --metric judge")
    return RubricJudge(
        ChatClient(
            args.judge_url,
            args.judge_model,
            api_key_env=args.judge_key_env,
            temperature=0,
            role="judge",
            cache=model_cache(args),
        ),
        json_mode=args.judge_json_mode,
    )


def run_name(run_dir) -> str:
    """A run's system spec from its manifest (``bm25:k=10``), else the folder name."""
    try:
        return str(read_manifest(run_dir)["config"]["system"]["spec"])
    except (InputError, KeyError, TypeError):
        return Path(run_dir).name


def _stored_scores(run_dir, suite, name: str, known: set[str]):
    """The keyword-recall scores a memeval run over the imported suite already holds (its dry scorer
    wrote them), or None for a folder without them (a hand-written answers file, another mode)."""
    if not (Path(run_dir) / "manifest.json").is_file():
        return None
    if read_manifest(run_dir)["config"]["mode"] != "dry":
        return None
    records = read_records(run_dir)
    for n, r in enumerate(records, 1):
        if r["qid"] not in known:
            raise InputError(Path(run_dir) / "records.jsonl", n, "qid", f"{r['qid']!r} is not a book-suite test_id")
    return keyword_scores_from_records(suite, records, name)


def _fairness(scores, names, args, judge, runs: dict[str, str]):
    """The fairness lines (``analysis.fairness``) over the answer sets, and the test ids every one of
    them has a score for (the table compares over those; its n rows say what each scored by itself)."""
    import polars as pl

    from ..analysis.fairness import compare_runs

    grader = (
        {"name": "judge", "judge": judge.identity()} if judge is not None else {"name": KEYWORD_RECALL, "version": "1"}
    )
    manifests = {}
    for name in names:
        cfg = {}
        if name in runs and (Path(runs[name]) / "manifest.json").is_file():
            cfg = read_manifest(runs[name])["config"]
        reader = (cfg.get("grader") or {}).get("reader")  # an answer-mode run's reader
        manifests[name] = {
            "config": {
                "system": {"spec": name, "params": (cfg.get("system") or {}).get("params") or {}},
                "mode": cfg.get("mode", "canned answers"),
                "grader": grader | ({"reader": reader} if reader else {}),
                "question_set": args.category or "all layers",
                "bench": {"name": "booksuite", "version": ""},
            }
        }
    rows = [
        {
            "run_id": x.system,
            "system": x.system,
            "tier": "suite",
            "qid": x.test_id,
            "axis": x.layer,
            "score": x.reward if x.status == "scored" else None,
            "ungraded_reason": None if x.status == "scored" else f"{x.status}: {x.reason or ''}".rstrip(": "),
            "error": None,
        }
        for x in scores
        if x.system in manifests
    ]
    schema = {k: pl.Utf8 for k in ("run_id", "system", "tier", "qid", "axis", "ungraded_reason", "error")}
    fair = compare_runs(pl.DataFrame(rows, schema=schema | {"score": pl.Float64}), manifests=manifests)
    return fair, set(fair.df["qid"].to_list())


def _note_ungraded(score) -> None:
    if score.status != "scored":
        print(f"{score.system} {score.test_id}: ungraded ({score.reason})", file=sys.stderr)


def run(args) -> int:
    suite, known = suite_from_args(args)
    rpath = Path(args.responses) if args.responses else Path(args.suite) / "fixtures" / "system_responses.example.json"
    responses = read_responses(rpath, known) if args.responses or rpath.is_file() or not args.run else {}
    stored: dict[str, list] = {}  # system -> keyword-recall scores its run's records already hold
    run_names: list[str] = []  # the runs' system names, in the order given
    run_dirs: list[str] = []
    for item in args.run:  # RUN_DIR, or NAME=RUN_DIR (two runs of one system side by side)
        label, sep, folder = item.partition("=")
        named = bool(sep) and bool(label) and not Path(item).exists()
        run_dir = folder if named else item
        name = label if named else run_name(run_dir)
        if name in responses or name in stored:
            raise InputError(
                run_dir, None, None, f"system name {name!r} is already taken (name this run: --run NAME={run_dir})"
            )
        run_names.append(name)
        run_dirs.append(run_dir)
        held = _stored_scores(run_dir, suite, name, known) if args.metric == KEYWORD_RECALL and not args.gold else None
        if held is not None:
            stored[name] = held
        else:
            responses[name] = answers_from_run(run_dir, known=known)
    if args.systems:
        for s in args.systems:
            if s not in responses and s not in stored:
                raise InputError(
                    "<command line>", None, "--systems", f"no system {s!r} (have: {', '.join([*responses, *stored])})"
                )
        stored = {s: stored[s] for s in args.systems if s in stored}
        responses = {s: responses[s] for s in args.systems if s in responses}
    if args.metric == KEYWORD_RECALL and not suite.gold:
        raise InputError(
            args.gold or Path(args.suite) / "fixtures" / "gold_facts.json",
            None,
            None,
            "keyword recall needs gold facts",
        )
    judge = make_judge(args) if args.metric == JUDGE else None
    scores = score_answer_sets(suite, responses, args.metric, judge, progress=_note_ungraded)
    scores += [x for held in stored.values() for x in held]
    names = args.systems or [*(n for n in responses if n not in run_names), *run_names]  # runs last, as given
    fair, common = _fairness(scores, names, args, judge, dict(zip(run_names, run_dirs)))
    for line in fair.lines():
        print(line)
    shown = [x for x in scores if x.test_id in common] if len(names) > 1 else scores
    print(format_table(layer_table(shown, names), args.metric, scores))
    if judge is not None:
        print(f"judge: {judge.identity()}")
    if args.out:
        write_jsonl(args.out, (s.to_dict() for s in scores))
    return 0
