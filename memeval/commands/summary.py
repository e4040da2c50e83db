"""memeval summary: the aggregate tables of one or more runs."""

from __future__ import annotations


HELP = "print per tier × axis scores, weighted/unweighted overall with floor/ceiling, and latency of runs"

FORMATS = ("table", "json", "csv", "md")
#: Columns shown without --wide (the rest are in --wide, --format json/csv).
NARROW = {
    "overall": [
        "system",
        "tier",
        "weighted",
        "weighted_raw",
        "unweighted",
        "n",
        "graded_own",
        "errors",
        "errata_dropped",
        "floor_weighted",
        "ceiling_weighted",
    ],
    "tier_axis": ["system", "tier", "axis", "score", "n", "graded_own", "errors", "recall_any@5"],
    "latency": ["system", "status", "n", "p50", "p95", "p99", "network_ms"],
    "cost": ["system", "tier", "accuracy", "n", "p50_ms", "prompt_tokens", "completion_tokens", "usd_per_1k_q"],
}
WIDTH = 100
#: Left out of the console tables without --wide, so scores fit beside their intervals (kept in CSV):
#: the floor and ceiling runs' scores, which stand in rows of their own whenever they are known (else
#: missing), and the per-axis error counts (each tier's are in the overall table, reasons above it).
TABLE_DROPS = {"overall": {"floor_weighted", "ceiling_weighted"}, "tier_axis": {"errors"}}


def add_arguments(p) -> None:
    p.add_argument("runs", nargs="+", help="run folders")
    p.add_argument(
        "--questions",
        choices=["core", "all"],
        default="all",
        help="core = only questions present in every tier (degradation comparisons)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default, fits 100 columns), json (every table, all columns), csv (the overall "
        "table), md (Markdown tables)",
    )
    p.add_argument("--wide", action="store_true", help="all columns (tables wider than 100 columns)")
    p.add_argument(
        "--prices",
        help="price table (YAML: {model: {input: USD, output: USD}} per million tokens): cost per question "
        "from each record's token usage (default: the cost the run recorded)",
    )
    p.add_argument(
        "--no-bounds",
        action="store_true",
        help="do not add the floor (no_memory) and ceiling (oracle) runs found beside these runs",
    )


def run(args) -> int:
    import json
    import sys

    import polars as pl
    from ._tables import console_tables, console_text  # polars on use: start-up time of every command

    from ..analysis.aggregate import (
        WEIGHT_TABLE,
        ceiling_gap_line,
        latency_table,
        load_records,
        manifest_summary,
        official_table,
        overall_table,
        question_set,
        retrieval_table,
        tier_axis_table,
    )
    from ..analysis.costs import cost_table, with_prices
    from ..analysis.fairness import compare_runs, with_own_counts
    from ..analysis.runs import run_info, sibling_bounds
    from ..run.cost import load_prices
    from ..run.folder import read_manifest
    from ..run.status import errors_by_reason, reasons_line
    from ..audit.validity import gate_line

    prices = load_prices(args.prices) if args.prices else None
    bounds = [] if args.no_bounds else sibling_bounds(args.runs)
    runs = [*args.runs, *bounds]
    df = with_prices(question_set(load_records(runs), args.questions), prices)
    infos = [run_info(r) for r in runs]
    sets = ", ".join(dict.fromkeys(i.question_set for i in infos))
    gates = [g for g in dict.fromkeys(_gate(read_manifest(r), gate_line) for r in runs) if g]
    # scores side by side only over the questions every run graded; each row's own counts beside them
    fair = compare_runs(df, runs, args.questions)
    by_tier, by_axis = ["system", "tier_index", "tier"], ["system", "tier_index", "tier", "axis"]
    tables = {
        "overall": with_own_counts(overall_table(fair.df), df, by_tier).drop("tier_index"),
        "tier_axis": with_own_counts(tier_axis_table(fair.df), df, by_axis).drop("tier_index"),
        "latency": latency_table(df).with_columns(pl.col("reasons").list.join("; ")),
        "retrieval_turn": retrieval_table(df, "turn").drop("tier_index"),
        "retrieval_session": retrieval_table(df, "session").drop("tier_index"),
        "cost": cost_table(df).drop("tier_index"),
    }
    official = official_table(df)
    if official.height:
        tables["official"] = official.drop("tier_index")
    errors = {
        i.run_id: errors_by_reason(df.filter((pl.col("run_id") == i.run_id) & pl.col("error").is_not_null()).to_dicts())
        for i in infos
    }
    if args.format == "json":
        out = {
            "runs": [
                manifest_summary(r)
                | {"bound": str(r) in map(str, bounds)}
                | {
                    "errors_by_reason": [
                        {"reason": e.reason, "count": e.count, "first": list(e.first)} for e in errors[i.run_id]
                    ]
                }
                for r, i in zip(runs, infos)
            ],
            "question_set": sets,
            "questions": args.questions,
            "validity": gates,
            "fairness": fair.lines(),
            "equal_questions": fair.n_common,
            **{k: t.to_dicts() for k, t in tables.items()},
        }
        print(json.dumps(out, indent=2, default=str))
        return 0
    if args.format == "csv":
        t = tables["overall"] if args.wide else _narrow(tables["overall"], "overall")
        t.write_csv(sys.stdout)
        return 0
    md = args.format == "md"
    # tables as text (intervals beside their scores, one missing-value symbol), never wrapped by polars
    tables_config = console_tables(10_000, tbl_formatting="MARKDOWN" if md else "ASCII_MARKDOWN")
    head = (lambda s: print(f"\n## {s}\n")) if md else (lambda s: print(f"\n{s}"))

    def show(t, name):
        return console_text(t if args.wide else _narrow(t, name, table=True))

    with tables_config:
        for r in runs:
            m = manifest_summary(r)
            tag = " (bound found beside)" if r in bounds else ""
            print(f"run {m['run_id']}: {m['system']}, mode {m['mode']}, status {m['status']}{tag}")
            if errors[m["run_id"]]:
                print(f"  errors by reason: {reasons_line(errors[m['run_id']])}")
        print(
            f"question set: {sets}; questions: {args.questions}"
            + (" (only those in every tier)" if args.questions == "core" else "")
        )
        for line in fair.lines():
            print(line if args.wide or md else _wrap(line))
        for g in gates:
            print(g)
        if gates:
            _print_retrieval(tables, head, args.wide)
        label = " -- NOT VALID on this bench, see above" if gates else ""
        head(
            f"Overall {scores_title(manifest_summary(r)['mode'] for r in runs)}{label} (floor = no_memory, ceiling = oracle on the same bench files)"
        )
        print("n: the questions every system here graded; graded_own: what each graded by itself")
        print(show(tables["overall"], "overall"))
        gap = ceiling_gap_line(df)
        if gap:
            print(gap)
        if "official" in tables:
            head("The bench's own answer metric (answer mode), beside memeval's verdicts")
            print(console_text(tables["official"]))
        head("Per tier × axis")
        print(show(tables["tier_axis"], "tier_axis"))
        if not gates:
            _print_retrieval(tables, head, args.wide)
        head("Latency minus round trip (ms)")
        print(show(tables["latency"], "latency"))
        head("Tokens per question and cost in USD per 1,000 questions (unknown costs left out: --wide)")
        print(show(tables["cost"], "cost"))
        head("Axis weights")
        if args.wide:
            print(WEIGHT_TABLE.transpose(include_header=False, column_names="axis"))
        else:
            import textwrap

            print(textwrap.fill(", ".join(f"{a} {w}" for a, w in WEIGHT_TABLE.iter_rows()), WIDTH))
        if not args.wide and not md:
            print("\n(--wide for every column, --format json|csv|md for files)")
    return 0


def scores_title(modes) -> str:
    """What the overall table's scores are, from the runs' modes (dry scores are memeval's rules on
    the returned memories; memory and answer modes are a judge's verdicts).

    >>> scores_title(["dry", "dry"]), scores_title(["answer"]), scores_title(["dry", "answer"])
    ('dry answer scores', 'judge-graded answer scores', 'scores (modes: answer, dry)')
    """
    found = sorted(set(modes))
    if found == ["dry"]:
        return "dry answer scores"
    if len(found) == 1:
        return f"judge-graded {found[0]} scores"
    return f"scores (modes: {', '.join(found)})"


def _wrap(line: str) -> str:
    import textwrap

    indent = " " * (len(line) - len(line.lstrip()) + 4)
    return textwrap.fill(line, WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def _narrow(t, name, table: bool = False):
    """The columns of ``NARROW[name]`` there are, each score followed by its ``_lo``/``_hi`` bounds
    where the table has them; ``table``: without the columns the console table leaves to --wide."""
    keep = [c for c in NARROW[name] if c in t.columns and not (table and c in TABLE_DROPS.get(name, ()))]
    return t.select([x for c in keep for x in (c, f"{c}_lo", f"{c}_hi") if x in t.columns])


def _gate(manifest: dict, gate_line):
    return gate_line(manifest["config"]["bench"]["name"], manifest.get("dry_validity"))


def _print_retrieval(tables, head, wide) -> None:
    from ._tables import console_text

    for level in ("turn", "session"):
        head(f"Evidence retrieval, {level} level (recall_any/recall_all/NDCG at k; n = questions with evidence)")
        t = tables[f"retrieval_{level}"]
        if not wide:
            t = t.select([c for c in t.columns if not c.endswith(("@1", "@3"))][:8])
        print(console_text(t))
