"""``memeval diff RUN_A RUN_B``: two runs on the same bench, question by question.

Per tier (and per tier × axis with ``--by-axis``): the mean of each run on the records both graded,
A − B with a paired-bootstrap 95% interval, how many questions only A or only B got right, and
McNemar's exact p on those; then the questions that flipped. Runs on different benches (content hash)
or question sets are refused: their questions are not the same questions.
"""

from __future__ import annotations

HELP = "compare two runs on shared questions: paired difference with interval, McNemar test, flipped questions"


def add_arguments(p) -> None:
    p.add_argument("run_a", metavar="RUN_A", help="run folder A")
    p.add_argument("run_b", metavar="RUN_B", help="run folder B")
    p.add_argument("--by-axis", action="store_true", help="also break the difference down per tier × axis")
    p.add_argument("--resamples", type=int, default=None, metavar="N", help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--flips", type=int, default=30, metavar="N", help="flipped questions to list (default 30; 0: none)")


def _readable_p(df):
    import polars as pl

    return df.with_columns(pl.col("p").map_elements(lambda v: f"{v:.2g}", return_dtype=pl.Utf8))


def run(args) -> int:
    from ._tables import console_tables  # polars on use: start-up time of every command

    from ..analysis.pairs import paired_diff

    d = paired_diff(args.run_a, args.run_b, by_axis=args.by_axis, n_resamples=args.resamples, seed=args.seed)
    with console_tables(100):
        print(f"{d.label}; {d.bench}")
        for line in d.fairness:
            print(line)
        print(d.method + "\n")
        print(_readable_p(d.overall))
        if args.by_axis:
            print("\nPer tier × axis")
            print(_readable_p(d.per_axis))
        if args.flips:
            print(f"\nFlipped questions: {d.flips.height} (first {min(args.flips, d.flips.height)})")
            if d.flips.height:
                print(d.flips.head(args.flips))
    return 0
