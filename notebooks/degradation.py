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
# # Degradation: scores as the haystack grows
#
# Each system ingests every tier of the bench (the tiers nest: only filler grows) and answers the
# same questions. The curves compare tiers on the **core set** (questions present in every tier);
# the heatmap reads every question of each tier. `no_memory` is the floor and `oracle` (handed the
# evidence turns, or an explicit "I don't know" where none is expected) the ceiling. Scores here are
# `dry` mode (rule-based, on the text returned) unless the `mode` parameter says otherwise. Where the
# bench's audit shows dry answer scores cannot grade it (abstractive golds), the report says so and
# leads with evidence retrieval; no dry score curve is drawn.

# %% tags=["parameters"]
# bench_dir: a bench folder; None = the lifelog bench generated from preset + seed into data/
bench_dir = None
preset = "demo"
seed = 1
systems = ["no_memory", "bm25", "oracle"]
# tiers: None = every tier of the bench
tiers: list[str] | None = None
mode = "dry"
# run_dirs: run folders (or NAME=RUN_DIR) to load instead of running `systems`
run_dirs: list[str] | None = None
runs_root = "runs"
x = "turns"  # or "tokens"
# seeds: e.g. [1, 2, 3]: one generated bench per seed (preset above), the same systems; the curve then
# shows the spread between benches beside each bench's own 95% intervals. None: one bench only.
seeds: list[int] | None = None
# resamples: bootstrap resamples behind every 95% interval (question-level; whole haystacks where shared)
resamples = 1000
# prices: a price table (YAML: {model: {input: USD, output: USD}} per million tokens) to price each
# question's tokens; None = the cost each run recorded (memeval run --prices)
prices: str | None = None
# attribute: attribute each run that has no reader (dry or memory mode: evidence stored, retrieved) with
# `memeval attribute` before loading it; answer-mode runs: attribute them with their reader and judge
# (memeval attribute RUN ...) and pass the attributed folders in run_dirs
attribute = False

# %%
import polars as pl
from IPython.display import HTML, display

from memeval import aggregate, plots
from memeval import setup_notebook
from memeval import gate_html, html_table, side_by_side
from memeval import run_folders, ensure_bench, load_runs, run_systems
from memeval import load_bench, natural_key
from memeval import attributed, attribution_split

setup_notebook()
bench_path = None
if run_dirs is None:
    bench_path = ensure_bench(bench_dir, preset, seed)
    run_dirs = run_systems(bench_path, systems, tiers, mode, runs_root)
if attribute:
    run_dirs = [attributed(d) for d in run_dirs]
df = load_runs(run_dirs)
run_dirs = run_folders(run_dirs)  # NAME=RUN_DIR items name their system
gate = aggregate.dry_validity_gate(run_dirs)  # None: dry answer scores are valid on this bench

# %% [markdown]
# ## Bench and runs

# %%
if bench_path is not None:
    bench = load_bench(bench_path)
    print(f"bench {bench.name} {bench.version} at {bench_path} (content hash {bench.content_hash[:12]})")
print("runs:", ", ".join(str(d) for d in run_dirs))
print("mode:", ", ".join(df["mode"].unique().to_list()))
tier_sizes = (
    df.group_by("tier_index", "tier", "tier_turns", "tier_tokens")
    .agg(
        pl.col("qid").n_unique().alias("questions"),
        pl.col("qid").filter(pl.col("in_all_tiers")).n_unique().alias("core questions"),
    )
    .sort("tier_index")
    .drop("tier_index")
)
display(HTML(html_table(tier_sizes, caption="tiers, smallest first (tier_tokens: memeval's approx-v1 count)")))

# %% [markdown]
# ## Evidence retrieval and degradation curves
#
# Evidence recall (any / all evidence turns among the first k returned, LongMemEval's definitions)
# over the questions that have evidence; questions without evidence are excluded for every system.

# %%
if gate:
    display(HTML(gate_html(gate)))
    for metric in ("turn_recall_any@5", "turn_recall_all@10", "session_recall_any@5"):
        plots.retrieval_curve(df, metric, x=x, n_resamples=resamples).show()
else:
    plots.degradation_curve(df, x=x, n_resamples=resamples).show()
    plots.degradation_curve(df, x=x, weighted=True, n_resamples=resamples).show()
    plots.retrieval_curve(df, "turn_recall_any@5", x=x, n_resamples=resamples).show()

# %%
if gate:
    print("dry answer-score curves are not drawn: dry scores are not valid on this bench (see above)")
else:
    for name in sorted(df["system"].unique().to_list(), key=natural_key):
        if name not in (plots.FLOOR_SYSTEM, plots.CEILING_SYSTEM):
            plots.degradation_curve(df, by="axis", system=name, x=x, n_resamples=resamples).show()

# %% [markdown]
# ## Across generated benches (seeds)
#
# With `seeds`, the same systems run on one generated bench per seed: the band is the spread between
# benches, the bars each bench's own 95% interval. A drop smaller than both is not a finding.

# %%
if seeds:
    seed_frames = {
        s: load_runs(run_systems(ensure_bench(None, preset, s), systems, tiers, mode, runs_root)) for s in seeds
    }
    plots.seed_spread_curve(seed_frames, x=x, n_resamples=resamples).show()
else:
    print("one bench only (set `seeds`, e.g. [1, 2, 3], to see the spread between generated benches)")

# %% [markdown]
# ## Questions outside the core set
#
# Questions whose evidence lives only in larger tiers (photos, other languages) cannot be compared
# across tiers: they are read off the largest tier.

# %%
outside = df.filter(~pl.col("in_all_tiers") & (pl.col("tier_index") == df["tier_index"].max()))
if outside.height:
    display(
        HTML(
            html_table(
                plots.mean_scores(outside, ["axis", "system"], n_resamples=resamples).drop("n_ungraded"),
                caption=f"mean score of questions outside the core set, tier {outside['tier'][0]} "
                "(lo-hi: 95% bootstrap interval; n: graded questions)",
            )
        )
    )
else:
    print("every question is asked in every tier: the core set is the whole bench")

# %% [markdown]
# ## Weighted and unweighted means, beside the weight table
#
# Weights say what a wrong answer costs (1 = done once retrieved, 2 = time or change to work out,
# 3 = a judgment). Floor and ceiling sit beside every system.

# %%
overall = aggregate.overall_table(df, n_resamples=resamples).drop("tier_index")
gap = aggregate.ceiling_gap_line(df)  # what the ceiling cannot reach, beside it
display(
    HTML(
        side_by_side(
            html_table(
                overall,
                caption="per system × tier (all questions of each tier; _lo/_hi: 95% bootstrap interval)"
                + (" -- dry answer scores, NOT VALID on this bench" if gate else "")
                + (f"; {gap}" if gap else ""),
            ),
            html_table(aggregate.WEIGHT_TABLE, caption="axis weights"),
        )
    )
)

# %% [markdown]
# ## Evidence retrieval per tier (turn and session level)

# %%
for level in ("turn", "session"):
    display(
        HTML(
            html_table(
                aggregate.retrieval_table(df, level).drop("tier_index"),
                caption=f"evidence retrieval, {level} level: n = questions with evidence, excluded = without",
            )
        )
    )

# %% [markdown]
# ## Per axis × tier

# %%
if gate:
    print("per-axis dry scores are not drawn: dry scores are not valid on this bench (see above)")
else:
    plots.axis_tier_heatmap(df, n_resamples=resamples).show()

# %% [markdown]
# ## Where answers fail: retrieval or reading

# %%
if gate:
    print("the outcome split reads dry scores, which are not valid on this bench (see above)")
else:
    plots.failure_split(df).show()

# %% [markdown]
# ## Where it broke: write, retrieval or reader
#
# Runs attributed by `memeval attribute` (or with `attribute=True`): each miss given one cause -- never
# stored (write loss), stored but not retrieved (retrieval loss), retrieved but not used by the reader
# while the reader answers right from the oracle evidence (reader loss), or missed by the reader even
# from the oracle evidence (reader ceiling). Hover: count and 95% interval of each share.

# %%
if df["attribution"].drop_nulls().len():
    attribution_split(df, n_resamples=resamples).show()
    attribution_split(df, by="axis", n_resamples=resamples).show()
else:
    print("no attribution in these runs: run `memeval attribute RUN` and pass the attributed folders in run_dirs")

# %% [markdown]
# ## Speed (beside accuracy, never folded in)

# %%
display(HTML(html_table(aggregate.latency_table(df), caption="latency minus round trip (ms) per system")))

# %% [markdown]
# ## Tokens and cost per question (beside accuracy and latency)
#
# The tokens of every model call a question made (reader, judge, and the system's own where it
# reports them), from the endpoints' `usage`, and their cost by the price table. A question whose
# cost is unknown (no token counts, or a model missing from the table) is counted in `unpriced`, never
# taken as free. Dry runs call no model.

# %%
from memeval import cost_table, with_prices
from memeval import load_prices

spend = cost_table(with_prices(df, load_prices(prices) if prices else None))
if spend["prompt_tokens"].fill_null(0).sum() == 0 and df["usage"].list.len().fill_null(0).sum() == 0:
    print(f"no model calls in these runs (mode: {', '.join(df['mode'].unique().to_list())}): no tokens, no cost")
display(
    HTML(
        html_table(
            spend.drop("tier_index"),
            caption="per system and tier: accuracy (mean score, n = graded), median latency minus round trip "
            "(ms), mean tokens per question, mean cost per question and per 1,000 questions (USD)",
        )
    )
)
