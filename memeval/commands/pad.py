"""``memeval pad BENCH --sizes 2000,8000 --seed 1 --out DIR``: add padded tiers (a saturation test)."""

from __future__ import annotations

from ..bench.padding import SOURCES, pad
from ..bench.tokens import TOKENS_LABEL
from ..errors import MemevalError

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write a bench whose tiers pad a tier with filler sessions (tiers nest; evidence unchanged)"


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise MemevalError(f"--sizes {text!r}: expected comma-separated turn counts like 2000,8000") from None
    if not sizes:
        raise MemevalError("--sizes: give at least one size")
    return sizes


def add_arguments(parser) -> None:
    parser.add_argument("bench", metavar="BENCH", help="bench folder (holds bench.yaml)")
    parser.add_argument(
        "--sizes", required=True, help="turns per haystack (or per tier for a one-haystack bench), comma-separated"
    )
    parser.add_argument(
        "--source",
        choices=SOURCES,
        default="haystacks",
        help="filler: sessions of other haystacks of the bench, or the lifelog generator",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tier", help="tier to pad (default: the smallest)")
    parser.add_argument("--name", help="name of the new bench (default: <name>-padded)")
    parser.add_argument("--out", required=True, metavar="DIR")
    parser.add_argument("--force", action="store_true", help="replace a non-empty --out folder")
    parser.add_argument("--no-progress", action="store_true", help="no step lines on stderr")


def run(args) -> int:
    import sys
    import time

    t0 = time.perf_counter()

    def progress(step: str) -> None:
        if not args.no_progress:
            print(f"[{time.perf_counter() - t0:6.1f} s] {step}", file=sys.stderr, flush=True)

    bench = pad(
        args.bench,
        _sizes(args.sizes),
        args.source,
        args.seed,
        args.out,
        tier=args.tier,
        name=args.name,
        force=args.force,
        progress=progress,
    )
    print(f"wrote {args.out}: {bench.name}")
    for t in bench.tiers:
        print(
            f"  {t.name}: {t.n_turns} turns, {t.n_sessions} sessions, {t.n_tokens} {TOKENS_LABEL}, "
            f"{t.n_questions} questions"
        )
    return 0
