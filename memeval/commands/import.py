"""``memeval import FORMAT PATH... --out DIR``: convert public benchmark files into a bench folder."""

from __future__ import annotations

from ..bench.loaders import FORMATS, import_bench
from ..bench.tokens import TOKENS_LABEL
from ..errors import MemevalError

__all__ = ["HELP", "add_arguments", "run"]

HELP = "convert LongMemEval (v1, v2), LoCoMo, glasshouse or book-suite files into a bench folder"


def add_arguments(parser) -> None:
    parser.add_argument("format", choices=FORMATS, help="the source format")
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="longmemeval: any of longmemeval_oracle/_s/_m .json (one tier each); "
        "locomo: locomo10.json; longmemeval-v2, glasshouse, booksuite: the folder",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="bench folder to write")
    parser.add_argument("--name", help="bench name (default: the format)")
    parser.add_argument("--force", action="store_true", help="replace a non-empty --out folder")
    parser.add_argument(
        "--tier", choices=("small", "medium"), help="longmemeval-v2: the haystack tier to import (default small)"
    )
    parser.add_argument(
        "--text-only",
        action="store_true",
        help="longmemeval-v2: leave out screenshots and question images (runs on it are not official)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    parser.add_argument(
        "--pair",
        action="append",
        default=[],
        metavar="FILE=TIER[,TIER]",
        help="glasshouse: attach question FILE to these tiers (refused where its evidence does not resolve)",
    )


def _pairs(items: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        fname, sep, tiers = item.partition("=")
        if not sep or not fname or not tiers:
            raise MemevalError(f"--pair {item!r}: expected FILE=TIER[,TIER]")
        out.setdefault(fname, []).extend(t for t in tiers.split(",") if t)
    return out


def run(args) -> int:
    from ._progress import Heartbeat

    with Heartbeat(f"importing {args.format} into {args.out}", enabled=not args.no_progress):
        bench = import_bench(
            args.format,
            args.paths,
            args.out,
            force=args.force,
            name=args.name,
            pairs=_pairs(args.pair) or None,
            tier=args.tier,
            text_only=args.text_only,
        )
    print(f"wrote {args.out}: {bench.name} {bench.version}")
    if "n_builds" in bench.extra:
        print(f"  {bench.extra['n_builds']} memory builds (distinct ordered haystacks)")
    for t in bench.tiers:
        print(
            f"  {t.name}: {t.n_turns} turns, {t.n_sessions} sessions, {t.n_tokens} {TOKENS_LABEL}, "
            f"{t.n_questions} questions"
        )
    return 0
