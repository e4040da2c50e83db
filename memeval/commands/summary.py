"""memeval summary: the aggregate tables of one or more runs."""

from __future__ import annotations


HELP = "print per tier × axis scores, weighted/unweighted overall with floor/ceiling, and latency of runs"

FORMATS = ("table", "json", "csv", "md")
#: Columns shown without --wide (the rest are in --wide, --format json/csv).
NARROW = {
    "overall": [
        "system",
        "role",
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
    "tier_axis": ["system", "role", "tier", "axis", "score", "n", "graded_own", "errors", "recall_any@5"],
    "latency": ["system", "role", "status", "n", "p50", "p95", "p99", "network_ms"],
    "cost": ["system", "role", "tier", "accuracy", "n", "p50_ms", "prompt_tokens", "completion_tokens", "usd_per_1k_q"],
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
    p.add_argument(
        "--bounds-by-axis",
        action="store_true",
        help="show the floor and ceiling in every table (per tier x axis, retrieval, latency, cost) rather "
        "than as one line each beside the systems",
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
        run_role,
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
    # floor and ceiling (the manifest marks the oracle): shown as bounds beside the systems, never ranked
    roles = {manifest_summary(r)["system"]: run_role(read_manifest(r)) for r in runs}
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
    role_of = pl.col("system").replace_strict(roles, default=None, return_dtype=pl.Utf8)
    tables = {k: _with_role(t, role_of) for k, t in tables.items()}
    errors = {
        i.run_id: errors_by_reason(df.filter((pl.col("run_id") == i.run_id) & pl.col("error").is_not_null()).to_dicts())
        for i in infos
    }
    if args.format == "json":
        out = {
            "runs": [
                manifest_summary(r)
                | {"bound": str(r) in map(str, bounds), "role": run_role(read_manifest(r))}
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
    long = args.wide or args.bounds_by_axis  # every row of the bounds, per tier x axis in long form

    def show(t, name):
        if not long:
            t = t.filter(pl.col("role").is_null())
        t = t if args.wide else _narrow(t, name, table=True)
        return console_text(t.drop("role") if "role" in t.columns and not args.wide else t)

    with tables_config:
        for r in runs:
            m = manifest_summary(r)
            role = roles.get(m["system"])
            tag = f" -- {role}, not ranked" if role else ""
            tag += " (found beside)" if r in bounds else ""
            line = f"run {m['run_id']}: {m['system']}, mode {m['mode']}, status {m['status']}{tag}"
            print(line if md or args.wide else _wrap(line))
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
            _print_retrieval(tables, head, args.wide, long)
        label = " -- NOT VALID on this bench, see above" if gates else ""
        head(
            f"Overall {scores_title(manifest_summary(r)['mode'] for r in runs)}{label} (floor = no_memory, ceiling = oracle on the same bench files)"
        )
        print("n: the questions every system here graded; graded_own: what each graded by itself")
        print(show(tables["overall"], "overall"))
        if not long:
            for line in _bound_lines(tables["overall"]):  # wrapped between tiers, never inside one
                print((line if md else _wrap(line)).replace("\xa0", " "))
        gap = ceiling_gap_line(df)
        if gap:
            print(gap)
        if "official" in tables:
            head("The bench's own answer metric (answer mode), beside memeval's verdicts")
            print(console_text(tables["official"].drop("role")))
        if long:
            head("Per tier × axis")
            print(show(tables["tier_axis"], "tier_axis"))
        else:
            _print_axis_grid(tables["tier_axis"], head)
        if not gates:
            _print_retrieval(tables, head, args.wide, long)
        _print_latency(show, tables["latency"], head, long)
        _print_cost(show, tables["cost"], head, long)
        if args.wide:
            head("Axis weights")
            print(WEIGHT_TABLE.transpose(include_header=False, column_names="axis"))
        else:
            print(_wrap(_weights_line(WEIGHT_TABLE)) if not md else _weights_line(WEIGHT_TABLE))
        if not args.wide and not md:
            print("(--wide: every column; --bounds-by-axis: floor and ceiling in every table; --format json|csv|md)")
    return 0


def _with_role(t, role_of):
    """``t`` with a ``role`` column after ``system`` (floor, ceiling or null) when it has systems."""
    if "system" not in t.columns:
        return t
    t = t.with_columns(role_of.alias("role"))
    cols = t.columns
    i = cols.index("system") + 1
    return t.select(cols[:i] + ["role"] + [c for c in cols[i:] if c != "role"])


def _bound_lines(overall) -> list[str]:
    """One line per bound: its weighted score per tier, with interval and n (the rows it would be); the
    spaces inside a tier's entry are no-break spaces (U+00A0), so wrapping breaks between tiers."""
    import polars as pl
    from ._tables import interval_text

    out = []
    for role in ("floor", "ceiling"):
        rows = overall.filter(pl.col("role") == role).to_dicts()
        if not rows:
            continue
        cells = [
            f"{r['tier']} {interval_text(r['weighted'], r['weighted_lo'], r['weighted_hi'])} n={r['n']}".replace(
                " ", "\xa0"
            )
            for r in rows
        ]
        out.append(f"{role} {rows[0]['system']} (weighted): " + "; ".join(cells))
    return out


def _print_axis_grid(t, head) -> None:
    """Per tier × axis, one grid per system (axes down, tiers across): each cell the score with its
    interval; ``n`` graded per tier (one number when equal); axes no tier graded named on one line."""
    import polars as pl
    from ._tables import MISSING, console_text
    from ..analysis.plot_base import axis_order

    t = t.filter(pl.col("role").is_null())
    tiers = t.select("tier").unique(maintain_order=True)["tier"].to_list()
    for system in t["system"].unique(maintain_order=True).to_list():
        d = t.filter(pl.col("system") == system)
        head(f"Per tier × axis: {system} (score [95% interval]; n = graded per tier)")
        rows, ungraded = [], []
        for axis in axis_order(d):
            cells = {r["tier"]: r for r in d.filter(pl.col("axis") == axis).to_dicts()}
            graded = [c for c in cells.values() if c["score"] is not None]
            if not graded:
                ungraded.append(axis)
                continue
            ns = sorted({c["n"] for c in graded})
            row = {"axis": axis}
            for tier in tiers:
                c = cells.get(tier)
                row[tier] = (
                    MISSING
                    if c is None or c["score"] is None
                    else f"{c['score']:.2f} [{c['score_lo']:.2f},{c['score_hi']:.2f}]"
                )
            row["n"] = str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
            rows.append(row)
        if rows:
            print(console_text(pl.DataFrame(rows, schema={c: pl.Utf8 for c in rows[0]})))
        if ungraded:
            print(f"not graded in any tier: {', '.join(ungraded)}")


def _print_latency(show, t, head, long) -> None:
    import polars as pl

    if not long and t.filter(pl.col("role").is_null()).height <= 2:  # a line per system
        print()
        for r in t.filter(pl.col("role").is_null()).to_dicts():
            p = ", ".join(f"{k} " + ("–" if r[k] is None else f"{r[k]:.3f}") for k in ("p50", "p95", "p99"))
            print(f"latency minus round trip (ms), {r['system']}: {r['status'] or '–'}, n={r['n']}, {p}")
        return
    head("Latency minus round trip (ms)")
    print(show(t, "latency"))


def _print_cost(show, t, head, long) -> None:
    import polars as pl

    shown = t if long else t.filter(pl.col("role").is_null())
    tokens = shown.select(pl.col("prompt_tokens").fill_null(0).sum(), pl.col("completion_tokens").fill_null(0).sum())
    if not long and not any(tokens.row(0)):
        print("tokens and cost: no model calls in these runs (no tokens, no cost)")
        return
    head("Tokens per question and cost in USD per 1,000 questions (unknown costs left out: --wide)")
    print(show(t, "cost"))


def _weights_line(weights) -> str:
    """The axis weights on one line, grouped by weight.

    >>> import polars as pl
    >>> _weights_line(pl.DataFrame({"axis": ["A", "B", "C"], "weight": [1, 3, 1]}))
    'axis weights: 1 = A, C; 3 = B'
    """
    groups: dict[int, list[str]] = {}
    for axis, w in weights.iter_rows():
        groups.setdefault(w, []).append(axis)
    return "axis weights: " + "; ".join(f"{w} = {', '.join(a)}" for w, a in sorted(groups.items()))


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


def _print_retrieval(tables, head, wide, long=True) -> None:
    import polars as pl
    from ._tables import console_text

    if not long:  # one table: recall of any / all evidence turns and sessions, systems only
        head("Evidence retrieval (recall at k, LongMemEval's definitions; n = questions with evidence)")
        turn = tables["retrieval_turn"].filter(pl.col("role").is_null())
        keep = ["system", "tier", "n", "recall_any@5", "recall_any@10", "recall_all@10"]
        t = turn.select(*keep).rename({c: f"turn {c.removeprefix('recall_')}" for c in keep[3:]})
        sess = tables["retrieval_session"].select("system", "tier", pl.col("recall_any@5").alias("session any@5"))
        print(console_text(t.join(sess, on=["system", "tier"], how="left")))
        return
    for level in ("turn", "session"):
        head(f"Evidence retrieval, {level} level (recall_any/recall_all/NDCG at k; n = questions with evidence)")
        t = tables[f"retrieval_{level}"]
        if not wide:
            t = t.drop("role").select([c for c in t.drop("role").columns if not c.endswith(("@1", "@3"))][:8])
        print(console_text(t))
