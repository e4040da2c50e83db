"""memeval summary: the aggregate tables of one or more runs."""

from __future__ import annotations

HELP = "print per tier × axis scores, weighted/unweighted overall with floor/ceiling, and latency of runs"


def add_arguments(p) -> None:
    p.add_argument("runs", nargs="+", help="run folders")
    p.add_argument("--questions", choices=["core", "all"], default="all",
                   help="core = only questions present in every tier (degradation comparisons)")


def run(args) -> int:
    import polars as pl

    from ..analysis.aggregate import (WEIGHT_TABLE, ceiling_gap_line, latency_table, load_records, manifest_summary, overall_table,
                                      official_table, question_set, retrieval_table, tier_axis_table)
    from ..run.records import read_manifest
    from ..audit.validity import gate_line

    df = question_set(load_records(args.runs), args.questions)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, float_precision=3, tbl_hide_dataframe_shape=True):
        for r in args.runs:
            m = manifest_summary(r)
            print(f"run {m['run_id']}: {m['system']} on {m['bench']}, mode {m['mode']}, status {m['status']}")
        print(f"\nquestion set: {args.questions}")
        gates = [g for g in dict.fromkeys(_gate(read_manifest(r), gate_line) for r in args.runs) if g]
        for g in gates:
            print(g)
        retrieval = [("turn", retrieval_table(df, "turn")), ("session", retrieval_table(df, "session"))]
        if gates:
            _print_retrieval(retrieval)
        label = " -- NOT VALID on this bench, see above" if gates else ""
        print(f"\nOverall dry answer scores{label} (weighted and unweighted; floor = no_memory, ceiling = oracle "
              "when run on the same bench)")
        print(overall_table(df).drop("tier_index"))
        gap = ceiling_gap_line(df)
        if gap:
            print(gap)
        official = official_table(df)
        if official.height:
            print("\nThe bench's own answer metric (answer mode), beside memeval's verdicts")
            print(official.drop("tier_index"))
        print("\nPer tier × axis")
        print(tier_axis_table(df).drop("tier_index"))
        if not gates:
            _print_retrieval(retrieval)
        print("\nLatency minus round trip (ms)")
        print(latency_table(df))
        print("\nAxis weights")
        print(WEIGHT_TABLE.transpose(include_header=False, column_names="axis"))
    return 0


def _gate(manifest: dict, gate_line):
    return gate_line(manifest["config"]["bench"]["name"], manifest.get("dry_validity"))


def _print_retrieval(tables) -> None:
    for level, t in tables:
        print(f"\nEvidence retrieval, {level} level (LongMemEval's recall_any/recall_all/NDCG at k; n = questions "
              "with evidence turns, excluded = without)")
        print(t.drop("tier_index"))
