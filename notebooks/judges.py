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
# # Judges: agreement and leniency
#
# Two questions about the grader rather than the system. **Agreement**: two judges grade the same
# answers; how often do their verdicts (correct / partial / wrong) match, and how much more than by
# chance (Cohen's kappa)? Records one judge left ungraded are counted apart, never as disagreements.
# **Leniency**: trap answers built from the bench itself — old values on STALE/UPDATE, near-miss
# values, hedged non-answers, one side of a CONTRADICT, going along with a FALSE_MEMORY premise,
# invented answers to ABSTAIN questions — that a strict judge must reject; a judge's *acceptance* is
# the share of them it gave any credit (correct or partial). Every rate carries its n.

# %% tags=["parameters"]
# run_a, run_b: two run folders holding the same answers graded by two judges; None = make them here
# (answer mode: `system` + one reader, graded once by each judge in `judges`)
run_a: str | None = None
run_b: str | None = None
# bench_dir: None = the lifelog bench generated from preset + seed into data/
bench_dir = None
preset = "demo"
seed = 1
# tier: the tier whose questions are answered and turned into trap answers (None = the first)
tier: str | None = None
system = "bm25"
# judges: [[base_url, model], ...] OpenAI-compatible judges; None = two scripted judges on loopback
# (a strict one and a lenient one, memeval.testing.judge_stubs), so that the report renders offline
judges: list[list[str]] | None = None
# reader: [base_url, model] for answer mode; None = the scripted reader on loopback
reader: list[str] | None = None
key_env = "OPENAI_API_KEY"
# max_per_trap: keep the first N trap answers of each trap (None = all)
max_per_trap: int | None = None
# runs_root: where the two gradings' runs go; None = a temporary folder (never the project's runs/)
runs_root: str | None = None

# %%
import contextlib

import polars as pl
from IPython.display import HTML, display

from memeval import judges as J
from memeval import grade_leniency, stub_endpoints, two_gradings
from memeval import setup_notebook
from memeval import html_table
from memeval import anchored, ensure_bench
from memeval import load_bench
from memeval import build_probes

setup_notebook()
bench_path = ensure_bench(bench_dir, preset, seed)
tier_name = tier or load_bench(bench_path).tiers[0].name
with contextlib.ExitStack() as stack:
    stubs = stack.enter_context(stub_endpoints()) if judges is None or reader is None else {}
    judge_eps = [tuple(j) for j in judges] if judges is not None else [stubs["strict"], stubs["lenient"]]
    reader_ep = tuple(reader) if reader is not None else stubs["reader"]
    if run_a is None or run_b is None:
        run_a, run_b = map(
            str, two_gradings(bench_path, system, [tier_name], judge_eps[:2], reader_ep, runs_root, key_env)
        )
    probes = build_probes(bench_path, tier_name, max_per_trap)
    verdicts = grade_leniency(probes, judge_eps, key_env)
pairs, label_a, label_b = J.load_judge_pair(anchored(run_a), anchored(run_b))
if judges is None:
    display(
        HTML(
            "<p><b>No judge given: the figures below come from two scripted judges on loopback</b> "
            "(strict: credit only for the gold itself; lenient: credit for any answer holding a value), "
            "not from a real model. They show what the measurement reports; pass <code>judges</code> "
            "(and <code>reader</code>) to measure real judges.</p>"
        )
    )
print("A =", label_a, "\nB =", label_b, "\nruns:", run_a, run_b)

# %% [markdown]
# ## Agreement of the two gradings
#
# `n` = records both judges graded; ungraded records are in their own columns. Kappa is empty where
# it is undefined (both judges gave one and the same verdict to every record of the axis).

# %%
display(HTML(html_table(J.agreement_table(pairs), caption=f"A = {label_a}; B = {label_b}")))

# %%
J.confusion_heatmap(J.confusion_table(pairs), "A: " + label_a, "B: " + label_b)

# %% [markdown]
# ## Leniency: acceptance of trap answers
#
# A strict judge's acceptance is 0 on every trap. `accepted` = any credit, `full` = graded correct.

# %%
per_trap = J.leniency_table(verdicts, ["judge", "trap"])
per_axis = J.leniency_table(verdicts, ["judge", "axis"])
display(
    HTML(
        html_table(
            J.leniency_table(verdicts, ["judge"]),
            caption=f"{len(probes)} trap answers from tier {tier_name} of {bench_path}",
        )
    )
)
display(HTML(html_table(per_trap, caption="per trap")))

# %%
J.acceptance_bars(per_trap, "trap")

# %%
display(HTML(html_table(per_axis, caption="per axis")))
J.acceptance_bars(per_axis, "axis")

# %% [markdown]
# ## Trap answers a judge accepted (first 20)

# %%
accepted = verdicts.filter(pl.col("score") > 0).select("judge", "trap", "axis", "qid", "answer", "verdict", "evidence")
display(HTML(html_table(accepted.head(20), caption=f"{accepted.height} accepted trap answers in all")))
