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
# # Traces: question by question
#
# In a live Jupyter session the browser below filters by system, tier, axis and verdict and steps
# through records, showing the question as asked, the gold, the answer, the memories returned
# (evidence marked) and the score. A static HTML report cannot run widgets, so it shows the
# worst-scoring records as tables instead.

# %% tags=["parameters"]
# run_dirs: run folders (or NAME=RUN_DIR) to load; None = run `systems` on the bench below
run_dirs: list[str] | None = None
# bench_dir: None = the lifelog bench generated from preset + seed into data/
bench_dir = None
preset = "demo"
seed = 1
systems = ["bm25"]
# tiers: None = every tier
tiers: list[str] | None = None
mode = "dry"
runs_root = "runs"
n_worst = 25
n_traces = 5

# %%
import polars as pl
from IPython.display import HTML, display

from memeval import dry_validity_gate
from memeval import setup_notebook
from memeval import gate_html
from memeval import TraceBrowser, evidence_texts, render_trace_html, with_flips, worst_questions_table
from memeval import run_folders, bench_of_run, ensure_bench, load_runs, run_systems

setup_notebook()
if run_dirs is None:
    run_dirs = run_systems(ensure_bench(bench_dir, preset, seed), systems, tiers, mode, runs_root)
df = load_runs(run_dirs)
run_dirs = run_folders(run_dirs)  # NAME=RUN_DIR items name their system
bench = bench_of_run(run_dirs[0])
evidence = evidence_texts(df, bench) if bench is not None else None
print(f"{df.height} records from", ", ".join(str(d) for d in run_dirs))
display(HTML(gate_html(dry_validity_gate(run_dirs))))

# %% [markdown]
# ## Browse (live sessions)

# %%
TraceBrowser(df, evidence)

# %% [markdown]
# ## The worst-scoring records
#
# The worst of every system × axis first, then the second worst of each, so no one group fills the table.

# %%
display(HTML(worst_questions_table(df, n_worst)))

# %% [markdown]
# ## The worst few in full

# %%
worst = (
    df.filter(pl.col("score").is_not_null())
    .sort(["score", "weight", "tier_index"], descending=[False, True, True])
    .head(n_traces)
)
display(HTML("<hr>".join(render_trace_html(r, evidence) for r in worst.to_dicts())))

# %% [markdown]
# ## Flipped between tiers
#
# Questions a system got right (score 1) in one tier and not in another: where growing the haystack
# broke it (or, rarely, helped).

# %%
flips = with_flips(df).filter(pl.col("flip_tiers"))
print(f"{flips.select('system', 'qid', 'epoch').n_unique()} question×system pairs flip between tiers")
display(HTML(worst_questions_table(flips, n_worst)))
