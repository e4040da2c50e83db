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
# # Latency: latency minus round trip, percentiles, speed points
#
# The figure is **latency minus round trip** (`max(1, latency − network floor)`), not compute time.
# A sequential question loop measures service time, not latency under load. Systems run in process
# have no network in between and are flagged; questions whose speed is unmeasurable are removed from
# the speed figure with their reason (never scored 0).

# %% tags=["parameters"]
# run_dirs: run folders (or NAME=RUN_DIR) to load; None = run `systems` on the bench below
run_dirs: list[str] | None = None
# bench_dir: None = the lifelog bench generated from preset + seed into data/
bench_dir = None
preset = "demo"
seed = 1
# systems: run in process (no network: service time)
systems = ["bm25"]
# served: built-in systems served on loopback by the reference server and run over HTTP (measured)
served = ["bm25"]
served_delay_ms = 0.0
# tiers: None = every tier
tiers: list[str] | None = None
mode = "dry"
runs_root = "runs"
target_ms = 500

# %%
import polars as pl
from IPython.display import HTML, display

from memeval import aggregate, plots
from memeval import setup_notebook
from memeval import gate_html, html_table
from memeval import run_folders, ensure_bench, label_systems, load_runs, run_served, run_systems

setup_notebook()
labels = {}
if run_dirs is None:
    bench_path = ensure_bench(bench_dir, preset, seed)
    run_dirs = run_systems(bench_path, systems, tiers, mode, runs_root)
    labels = run_served(bench_path, served, tiers, mode, runs_root, served_delay_ms)
    run_dirs = run_dirs + list(labels.values())
df = label_systems(load_runs(run_dirs), labels)
run_dirs = run_folders(run_dirs)  # NAME=RUN_DIR items name their system
print("runs:", ", ".join(str(d) for d in run_dirs))
display(HTML(gate_html(aggregate.dry_validity_gate(run_dirs))))  # speed stands; dry scores may not

# %% [markdown]
# ## Percentiles per system (ms, latency minus round trip)

# %%
display(HTML(html_table(aggregate.latency_table(df), caption=f"target {target_ms} ms; raw samples are in the records")))

# %%
plots.latency_histogram(df)

# %% [markdown]
# ## Write path: ingest time and, for systems that index asynchronously, time to searchable per haystack

# %%
from memeval import read_manifest

plots.write_path_figure({str(d): read_manifest(d) for d in run_dirs})

# %% [markdown]
# ## Per tier: does the haystack's size slow retrieval down?

# %%
lmr = pl.col("latency_minus_rtt_ms")
per_tier = (
    df.filter(pl.col("speed_status").is_in(["measured", "in_process"]) & pl.col("error").is_null())
    .group_by("system", "tier_index", "tier", "tier_turns")
    .agg(
        pl.len().alias("n"),
        lmr.quantile(0.5, "linear").alias("p50"),
        lmr.quantile(0.95, "linear").alias("p95"),
        pl.col("speed_points").mean().alias("speed_points"),
        pl.col("response_bytes").median().alias("median_bytes"),
    )
    .sort("system", "tier_index")
    .drop("tier_index")
)
display(HTML(html_table(per_tier, caption="latency minus round trip per tier (ms); speed points averaged")))

# %% [markdown]
# ## Unmeasurable and errored questions, with reasons

# %%
excluded = (
    df.filter((pl.col("speed_status") == "unmeasurable") | pl.col("error").is_not_null())
    .group_by("system", "speed_status", "speed_reason", "error")
    .agg(pl.len().alias("questions"))
    .sort("system", "questions", descending=[False, True])
)
if excluded.height:
    display(HTML(html_table(excluded, caption="removed from the speed figure")))
else:
    print("every question's speed was measured (none unmeasurable, no errors)")
