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
# # Sweep: systems across seeds and tiers
#
# A sweep runs every system on one generated bench per seed, each (seed, system, tier) as its own
# shard on a Dask cluster (`memeval sweep`; here a `LocalCluster` of `workers` processes). Each shard
# is an ordinary run folder; the sweep folder lists them. The curves below compare systems within each
# bench (bars: 95% bootstrap intervals over questions) and across benches (band: the spread between
# seeds). Scores are `dry` mode (rule-based, on the text returned) unless `modes` says otherwise.

# %% tags=["parameters"]
# sweep_dir: a sweep folder to load (from `memeval sweep SWEEP.yaml`); None = run the sweep below first
sweep_dir = None
preset = "demo"
seeds = [1, 2]
systems = ["no_memory", "bm25", "oracle"]
# tiers: None = every tier of the bench
tiers: list[str] | None = None
modes = ["dry"]
name = "notebook"  # the sweep folder is runs/sweep_<name>; rerunning resumes it
workers = 2
dashboard = ":8787"  # the Dask dashboard's address (another port if taken); None: no dashboard
runs_root = "runs"
x = "turns"  # or "tokens"
# resamples: bootstrap resamples behind every 95% interval (question-level; whole haystacks where shared)
resamples = 1000

# %%
import polars as pl
from IPython.display import HTML, display

from memeval import aggregate, plots
from memeval import setup_notebook
from memeval import sweep_table
from memeval import gate_html, html_table
from memeval import anchored, load_runs, run_folders, sweep_systems

setup_notebook()
if sweep_dir is None:
    sweep_dir = sweep_systems(
        systems, preset, seeds, tiers, modes, name, runs_root, workers=workers, dashboard=dashboard
    )
sweep_dir = anchored(sweep_dir)
df = load_runs(sweep_dir)
if df["mode"].n_unique() > 1:  # one line per system and mode
    df = df.with_columns((pl.col("system") + " (" + pl.col("mode") + ")").alias("system"))
df = df.with_columns(pl.coalesce(pl.col("seed").cast(pl.Utf8), pl.col("bench")).alias("bench_key"))
gate = aggregate.dry_validity_gate(run_folders(sweep_dir))  # None: dry answer scores are valid here

# %% [markdown]
# ## Shards

# %%
shards = sweep_table(sweep_dir)
print(f"sweep folder {sweep_dir}: {shards.height} shards, {df.height} records")
display(
    HTML(html_table(shards.drop("shard"), caption="one run folder per shard (records: as the sweep last saw them)"))
)

# %% [markdown]
# ## Across seeds: mean per tier, band = spread between benches
#
# Floor (`no_memory`) and ceiling (`oracle`) are left out of this figure; they are drawn per bench below.

# %%
frames = {k: df.filter(pl.col("bench_key") == k) for k in df["bench_key"].unique(maintain_order=True).to_list()}
if gate:
    display(HTML(gate_html(gate)))
    print("dry answer-score curves are not drawn: dry scores are not valid on these benches")
else:
    plots.seed_spread_curve(frames, x=x, n_resamples=resamples).show()

# %% [markdown]
# ## Per bench: every system with its 95% intervals, floor and ceiling as bands

# %%
for key, one in frames.items():
    print(f"bench {one['bench'][0]}")
    if not gate:
        plots.degradation_curve(one, x=x, n_resamples=resamples).show()
    plots.retrieval_curve(one, "turn_recall_any@5", x=x, n_resamples=resamples).show()

# %% [markdown]
# ## Per bench × system × tier (all questions of each tier; _lo/_hi: 95% bootstrap interval)

# %%
for key, one in frames.items():
    table = aggregate.overall_table(one, n_resamples=resamples).drop("tier_index")
    display(
        HTML(
            html_table(table, caption=f"bench {one['bench'][0]}" + (" -- dry answer scores, NOT VALID" if gate else ""))
        )
    )
