"""``memeval generate``: write the built-in life-story bench (lifelog.md) into a folder."""

from __future__ import annotations

import time
from pathlib import Path

HELP = "generate the built-in life-story bench (tiny, demo or full) into a folder"


def add_arguments(parser) -> None:
    from ..bench.lifelog import PRESETS

    parser.add_argument("--preset", choices=sorted(PRESETS), default="demo", help="size (default: demo)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default: 1, as the notebooks use)")
    parser.add_argument(
        "--out",
        type=Path,
        help="folder to write (created or replaced; default "
        "data/lifelog-PRESET-sSEED under the project root, where the notebooks look)",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace a non-empty folder that is not a previous generation"
    )


def run(args) -> int:
    from ..bench.io import load_bench
    from ..bench.lifelog import generate

    from ..workspace import anchored

    t0 = time.perf_counter()
    out = generate(
        args.preset, args.seed, args.out or anchored("data") / f"lifelog-{args.preset}-s{args.seed}", force=args.force
    )
    bench = load_bench(out)
    print(
        f"wrote {bench.name} {bench.version} preset={args.preset} seed={args.seed} to {out} "
        f"in {time.perf_counter() - t0:.2f} s"
    )
    for t in bench.tiers:
        print(
            f"  {t.name:6} sessions={t.n_sessions:5} turns={t.n_turns:6} tokens={t.n_tokens:8} "
            f"questions={t.n_questions:5}"
        )
    from ..bench.tokens import TOKENS_LABEL

    print(f"  token counts are {TOKENS_LABEL}")
    print(f"  content_hash {bench.content_hash}")
    return 0
