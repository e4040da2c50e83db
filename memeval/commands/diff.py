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
    import polars as pl
    from ._tables import console_tables  # polars on use: start-up time of every command

    from ..analysis.aggregate import load_records
    from ..analysis.fairness import compare_runs
    from ..analysis.intervals import DEFAULT_RESAMPLES, paired_differences
    from ..errors import MemevalError
    from ..run.folder import run_identity

    ca, hash_a, set_a = run_identity(args.run_a)
    cb, hash_b, set_b = run_identity(args.run_b)
    if hash_a != hash_b:
        raise MemevalError(
            f"{args.run_b}: bench content hash {hash_b[:12]} differs from {args.run_a}'s "
            f"{hash_a[:12]}: not the same questions, refusing to compare"
        )
    if set_a != set_b:
        raise MemevalError(
            f"{args.run_b}: question set {set_b!r} differs from {args.run_a}'s {set_a!r}: refusing to compare"
        )
    a, b = load_records([args.run_a]), load_records([args.run_b])
    n = args.resamples or DEFAULT_RESAMPLES
    label = f"A = {ca['system']['spec']} ({ca['mode']}), B = {cb['system']['spec']} ({cb['mode']})"
    tiers = a.select("tier", "tier_index").unique().sort("tier_index")
    with console_tables(100):
        print(f"{label}; bench {ca['bench']['name']} {ca['bench']['version']}, question set {set_a}")
        for line in compare_runs(pl.concat([a, b], how="vertical_relaxed"), [args.run_a, args.run_b]).lines():
            print(line)
        print(
            f"difference A − B on records both runs graded; 95% paired bootstrap ({n} resamples, seed "
            f"{args.seed}); a_only/b_only = right (score 1) in one run only; p = exact McNemar\n"
        )
        overall = paired_differences(a, b, ["tier"], n_resamples=n, seed=args.seed)
        print(_readable_p(tiers.join(overall, on="tier", how="inner").sort("tier_index").drop("tier_index")))
        if args.by_axis:
            print("\nPer tier × axis")
            per_axis = paired_differences(a, b, ["tier", "axis"], n_resamples=n, seed=args.seed)
            print(
                _readable_p(tiers.join(per_axis, on="tier", how="inner").sort("tier_index", "axis").drop("tier_index"))
            )
        if args.flips:
            keys = ["tier", "qid", "epoch"]
            flips = (
                a.select(*keys, "tier_index", "axis", pl.col("score").alias("a"))
                .join(b.select(*keys, pl.col("score").alias("b")), on=keys)
                .filter(
                    pl.col("a").is_not_null() & pl.col("b").is_not_null() & ((pl.col("a") >= 1) != (pl.col("b") >= 1))
                )
                .sort("tier_index", "axis", "qid")
                .drop("tier_index")
            )
            print(f"\nFlipped questions: {flips.height} (first {min(args.flips, flips.height)})")
            if flips.height:
                print(flips.head(args.flips))
    return 0
