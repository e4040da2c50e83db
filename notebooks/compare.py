# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Compare systems side by side
#
# Several runs over the same bench: accuracy (weighted and unweighted, with floor and ceiling),
# how much text each system returned (dry mode rewards returning more text: read `median_chars`
# beside the score), retrieval hit rate, and speed. Scores are compared over the questions every
# system graded (the fairness line below says what that left out, what settings differ, and which
# system returns nearly the whole haystack).

# %% tags=["parameters"]
# run_dirs: run folders (or NAME=RUN_DIR) to load; None = run `systems` on the bench below
run_dirs: list[str] | None = None
# bench_dir: None = the lifelog bench generated from preset + seed into data/
bench_dir = None
preset = "demo"
seed = 1
systems = ["no_memory", "recent:tokens=2000", "bm25:k=5", "bm25", "bm25:k=20", "oracle"]
# tiers: None = every tier
tiers: list[str] | None = None
mode = "dry"
runs_root = "runs"
# baseline: the system every other is paired against below; None = the first in natural order (bm25 before
# bm25:k=5 before bm25:k=20) that is neither the floor (no_memory) nor the ceiling (oracle)
baseline: str | None = None
# prices: a price table (YAML: {model: {input: USD, output: USD}} per million tokens); None = the cost
# each run recorded (memeval run --prices)
prices: str | None = None

# %%
from pathlib import Path

import polars as pl
from IPython.display import HTML, display

from memeval import aggregate, plots
from memeval import setup_notebook
from memeval import gate_html, html_table, side_by_side, with_interval_text
from memeval import ensure_bench, load_runs, run_folders, run_systems
from memeval import compare_runs, natural_key

setup_notebook()
if run_dirs is None:
    run_dirs = run_systems(ensure_bench(bench_dir, preset, seed), systems, tiers, mode, runs_root)
df = load_runs(run_dirs)
run_dirs = run_folders(run_dirs)  # NAME=RUN_DIR items name their system
gate = aggregate.dry_validity_gate(run_dirs)  # None: dry answer scores are valid on this bench
fair = compare_runs(df, run_dirs)  # fair.df: the records of the questions every system graded
systems = sorted(df["system"].unique().to_list(), key=natural_key)  # bm25, bm25:k=5, bm25:k=20, ...
rank = {s: i for i, s in enumerate(systems)}


def in_order(t: pl.DataFrame) -> pl.DataFrame:
    """``t``'s rows in the systems' natural order."""
    return t.sort(pl.col("system").replace_strict(rank, return_dtype=pl.Int64), maintain_order=True)


print("runs:", ", ".join(str(d) for d in run_dirs))
print("\n".join(fair.lines()))

# %% [markdown]
# ## Evidence retrieval
#
# Evidence recall and NDCG at k (LongMemEval's definitions) over questions with evidence turns;
# where dry answer scores are not valid on the bench, this is the comparison to read.

# %%
display(
    HTML(
        gate_html(gate)
        + html_table(
            in_order(aggregate.retrieval_table(df, "turn")).drop("tier_index"),
            caption="evidence retrieval, turn level (n = questions with evidence, excluded = without)",
        )
    )
)

# %% [markdown]
# ## Overall, per tier

# %%
overall = aggregate.overall_table(fair.df)
wide = {
    k: in_order(with_interval_text(overall, k).pivot(on="tier", index="system", values=k, sort_columns=False))
    for k in ("weighted", "unweighted")
}
label = " (dry answer scores: NOT VALID on this bench)" if gate else ""
display(
    HTML(
        side_by_side(
            html_table(
                wide["weighted"],
                caption="weighted mean per tier [95% interval] n = questions every system graded" + label,
            ),
            html_table(wide["unweighted"], caption="unweighted mean per tier"),
            html_table(aggregate.WEIGHT_TABLE, caption="axis weights"),
        )
    )
)

# %%
if gate:
    print("dry answer-score curves are not drawn: dry scores are not valid on this bench (see above)")
else:
    plots.degradation_curve(fair.df).show()

# %% [markdown]
# ## Largest tier, per axis

# %%
largest = fair.df.filter(pl.col("tier_index") == fair.df["tier_index"].max())
per_axis = with_interval_text(aggregate.tier_axis_table(largest), "score").pivot(
    on="system", index="axis", values="score", sort_columns=False
)
per_axis = per_axis.select("axis", *(s for s in systems if s in per_axis.columns))
display(
    HTML(
        html_table(
            per_axis,
            caption=f"mean score per axis [95% interval] n = graded by every system, tier {largest['tier'][0]}",
        )
    )
)

# %% [markdown]
# ## Text returned, retrieval and speed

# %%
returned = (
    df.group_by("system")
    .agg(
        pl.col("chars_returned").median().alias("median_chars"),
        pl.col("retrieval_hit").cast(pl.Float64).mean().alias("retrieval_hit_rate"),
        pl.col("error").is_not_null().sum().alias("errors"),
    )
    .join(aggregate.latency_table(df).select("system", "status", "p50", "p95", "speed_points"), on="system")
    .pipe(in_order)
)
display(
    HTML(html_table(returned, caption="median characters returned, retrieval hit rate, latency minus round trip (ms)"))
)

# %%
if gate:
    print("the outcome split reads dry scores, which are not valid on this bench (see above)")
else:
    plots.failure_split(df).show()

# %% [markdown]
# ## Accuracy against latency and cost: the frontier
#
# One point per system and operating point (`bm25:k=5`, `k=10`, `k=20` ...) at the largest tier every
# system ran; the dashed line joins the points no other point beats on both axes. Compare systems at
# one reading budget with `memeval run --mode answer --context-max-tokens N`. Cost needs token counts
# from the endpoints and a price table (`prices` above, or `memeval run --prices`).

# %%
from memeval import operating_points, with_prices
from memeval import load_prices

priced = with_prices(fair.df, load_prices(prices) if prices else None)
if gate:
    print("the frontier reads dry scores, which are not valid on this bench (see above)")
else:
    plots.frontier_plot(priced).show()
    display(
        HTML(
            html_table(
                in_order(operating_points(priced)).select(
                    "system",
                    "tier",
                    "accuracy",
                    "n",
                    "p50_ms",
                    "prompt_tokens",
                    "completion_tokens",
                    "usd_per_1k_q",
                    "unpriced",
                    "latency_frontier",
                    "cost_frontier",
                ),
                caption="operating points: accuracy (n = graded), median latency minus round trip (ms), "
                "mean tokens per question, USD per 1,000 questions (unpriced: cost unknown), frontiers",
            )
        )
    )

# %% [markdown]
# ## Paired differences, question by question
#
# Each system against `baseline` (floor and ceiling left out), on the questions both graded: the
# difference with its paired-bootstrap 95% interval, how many questions only one of the two got right,
# and McNemar's exact p on those. The same code as `memeval diff RUN_A RUN_B` (which also lists the
# flipped questions), with its checks: runs on other bench files or question sets are refused.

# %%
from memeval import paired_diff

contenders = [s for s in systems if s not in (plots.FLOOR_SYSTEM, plots.CEILING_SYSTEM)]
run_of = {Path(d).name: Path(d) for d in run_dirs}  # a run folder is named by its run id
run_id = dict(df.select("system", "run_id").unique(maintain_order=True).iter_rows())
base = baseline or (contenders[0] if contenders else None)
if base is not None and base not in run_id:
    raise ValueError(f"baseline {base!r} is not one of the systems compared: {', '.join(systems)}")
others = [s for s in contenders if s != base]
if base is None or not others:
    print("fewer than two systems besides floor and ceiling: nothing to pair")
else:
    rows, method = [], ""
    for other in others:
        d = paired_diff(
            run_of[run_id[other]],
            run_of[run_id[base]],
            by_axis=False,
            records=(df.filter(pl.col("system") == other), df.filter(pl.col("system") == base)),
        )
        rows.append(d.overall.with_columns(pl.lit(f"{other} − {base}").alias("pair")))
        method = d.method
    table = pl.concat(rows).select("pair", "tier", "n", "mean_a", "mean_b", "diff", "lo", "hi", "a_only", "b_only", "p")
    display(HTML(html_table(table, caption=f"A − B per tier, B = {base} (baseline): {method}")))

# %% [markdown]
# ## LongMemEval-V2: the accuracy–latency frontier (LAFS)
#
# For runs on a LongMemEval-V2 bench (`memeval import longmemeval-v2`): each system one operating point
# (mean official score, mean query seconds) over the questions every system scored, drawn with the
# leaderboard's reference points; the title gives the LAFS gain over the reference frontier with its
# bootstrap 95% interval (questions resampled, each one's score and latency together). Other benches
# have no official score, so nothing is drawn for them.

# %%
from memeval import lafs_frontiers

frontiers = lafs_frontiers(df)
if not frontiers:
    print("no LongMemEval-V2 runs with official scores among these: no LAFS frontier")
for fig in frontiers:
    fig.show()
