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
# # Multi-turn tasks: pass rates by stratum and where each failure broke
#
# Samples are cut by goal from recorded sessions and replayed: user turns and tool returns are
# fixed, every model output is regenerated and fed back. Each sample runs three times (pass if two
# pass, else `flaky`). The main denominator is the task count; `undetermined`, `flaky`,
# `incomplete` and `env_drift` are reported as their own shares. Strata weigh 1-3 turns 0.2,
# 4-8 turns 0.5, 9+ turns 0.3 (renormalised when a stratum has no pass/fail verdict).

# %% tags=["parameters"]
# suite_dir: None = generate the built-in suite from seed/sessions into data/
suite_dir = None
seed = 20261018
sessions = 12
cross_session = 1
# agents: scripted reference agents to replay (see memeval.multiturn.agents.SCRIPTED_AGENTS)
agents = ["correct", "drops_constraint", "keeps_old_value", "adds_tax_line", "omits_key", "flaky", "wrong_tool"]
# records_path: None = replay now; else a records JSONL written by `memeval multiturn run`
records_path = None
grader_version = None
n_static = 4

# %%
from pathlib import Path

from IPython.display import HTML, display

from memeval import setup_notebook
from memeval import anchored
from memeval import make_agent
from memeval import MULTITURN_GRADER_CONFIG as DEFAULT_CONFIG
from memeval import RuleExtractor, extractor_accuracy
from memeval import pass_rates, results_frame, wilson_interval
from memeval import bad_turn_histogram, correction_breakdown, latest_sample_records as latest, process_directions
from memeval import bad_turn_figure, shares_figure, strata_figure
from memeval import read_sample_records
from memeval import failed_records, render_sample
from memeval import rows_table
from memeval import run_suite
from memeval import generate_suite, load_suite, save_suite
from memeval import drilldown

setup_notebook()  # plotly.js embedded once: figures render offline in the HTML report

if records_path is None:
    if suite_dir is None:
        suite_dir = anchored(f"data/multiturn-s{seed}-n{sessions}")  # the project root's data/, whatever the cwd
        if not (Path(suite_dir) / "suite.yaml").is_file():
            save_suite(generate_suite(seed, sessions, cross_session), suite_dir)
    suite = load_suite(anchored(suite_dir))
    records = [r for a in agents for r in run_suite(suite, make_agent(a))]
else:
    records = read_sample_records(anchored(records_path))
df = results_frame(records)
versions = sorted(df["grader_version"].unique().to_list())
grader_version = grader_version or versions[-1]
print(
    f"{len(records)} records, agents {sorted(df['agent'].unique().to_list())}, grader versions {versions}; "
    f"showing {grader_version}"
)

# %% [markdown]
# ## Pass rate per stratum, with the weighted total

# %%
rates = {
    a: pass_rates(df, grader_version, a)
    for a in sorted(df.filter(df["grader_version"] == grader_version)["agent"].unique().to_list())
}
strata_figure(rates).show()


# %%
def _ci(lo, hi):
    return "–" if lo is None else f"{lo:.3f}–{hi:.3f}"


rows = []
for a, pr in rates.items():
    rows += [
        {"agent": a, "weight used": r["weight_used"], "95% interval": _ci(r["rate_lo"], r["rate_hi"]), **r}
        for r in pr.strata.iter_rows(named=True)
    ]
    rows.append(
        {"agent": a, "stratum": "total (weighted)", "rate": pr.total, "95% interval": _ci(pr.total_lo, pr.total_hi)}
    )
display(
    HTML(
        rows_table(
            rows,
            [
                "agent",
                "stratum",
                "weight",
                "weight used",
                "pass",
                "fail",
                "undetermined",
                "flaky",
                "incomplete",
                "env_drift",
                "rate",
                "95% interval",
            ],
        )
    )
)

# %% [markdown]
# ## Shares outside the denominator; breakdown by corrections and cross-task

# %%
shares_figure(rates).show()
brk = []
for a, pr in rates.items():
    for r in pr.by_corrections.iter_rows(named=True):
        brk.append(
            {
                "agent": a,
                "split": f"corrections {r['corrections_group']}",
                "tasks": r["tasks"],
                "rate": r["rate"],
                "95% interval": _ci(r["rate_lo"], r["rate_hi"]),
            }
        )
    for r in pr.by_cross_task.iter_rows(named=True):
        brk.append(
            {
                "agent": a,
                "split": f"cross_task={r['cross_task']}",
                "tasks": r["tasks"],
                "rate": r["rate"],
                "95% interval": _ci(r["rate_lo"], r["rate_hi"]),
            }
        )
for a, pr in rates.items():
    ts = pr.turn_samples
    brk.append(
        {
            "agent": a,
            "split": "turn samples (counted per turn, outside the task rate)",
            "tasks": ts["samples"],
            "rate": ts["rate"],
            "95% interval": _ci(*wilson_interval(ts["pass"], ts["pass"] + ts["fail"])),
        }
    )
    ss = pr.session_units or {"samples": 0}
    if ss["samples"]:
        brk.append(
            {
                "agent": a,
                "split": "session units (counted per session, outside the task rate)",
                "tasks": ss["samples"],
                "rate": ss["rate"],
                "95% interval": _ci(*wilson_interval(ss["pass"], ss["pass"] + ss["fail"])),
            }
        )
display(HTML(rows_table(brk, ["agent", "split", "tasks", "rate", "95% interval"])))

# %% [markdown]
# ## Where it breaks: bad-turn histogram, process errors, corrections
#
# Position 1 is the first turn a sample is judged on (a new goal sharing a prefix is judged from
# its own first turn). Per assertion mode every failed assertion counts at its own breaking turn.
# "Final right / process wrong" are passes with a process score below 1; "final wrong / process
# right" are failures with a perfect process score (samples of at least 4 graded turns).

# %%
mine = {a: latest(records, grader_version, a) for a in rates}
bad_turn_figure({a: bad_turn_histogram(rs, "stratum") for a, rs in mine.items()}).show()
hist_rows = [
    {"agent": a, "mode": g, "breaking turn": p, "failed assertions": c}
    for a, rs in mine.items()
    for g, p, c in bad_turn_histogram(rs, "mode").iter_rows()
]
display(
    HTML(
        "<h4>Bad turn per assertion mode</h4>"
        + rows_table(hist_rows, ["agent", "mode", "breaking turn", "failed assertions"])
    )
)
proc_rows = []
for a, rs in mine.items():
    d = process_directions(rs)
    proc_rows.append(
        {
            "agent": a,
            "n": d["n"],
            "mean process score": d["mean_process"],
            "final right / process wrong": f"{d['final_right_process_wrong']} of {d['pass']}",
            "final wrong / process right": f"{d['final_wrong_process_right']} of {d['fail']}",
        }
    )
display(HTML("<h4>Process score and the two error directions</h4>" + rows_table(proc_rows, list(proc_rows[0]))))
corr_rows = [{"agent": a, **r} for a, rs in mine.items() for r in correction_breakdown(rs).iter_rows(named=True)]
display(
    HTML(
        "<h4>Correction breakdown (fact, goal, form): response lag and stale residue</h4>"
        + rows_table(
            corr_rows,
            ["agent", "kind", "tasks", "pass", "fail", "rate", "lag_n", "mean_lag", "never_changed", "stale_residue"],
        )
    )
)

# %% [markdown]
# ## Where it broke: the bad_turn drill-down
#
# Live: pick a failed sample; its turns show the state trace, the breaking turn highlighted,
# expected vs actual per asserted key and the tool returns of each turn. The static report shows
# the first failures of each agent below (widgets do not run in HTML).

# %%
display(drilldown([r for r in records if r["grader_version"] == grader_version]))

# %%
failed = failed_records([r for r in records if r["grader_version"] == grader_version])
shown = {}
for r in failed:
    if shown.get(r["agent"], 0) < n_static:
        shown[r["agent"]] = shown.get(r["agent"], 0) + 1
        display(HTML(render_sample(r)))
display(
    HTML(
        rows_table(
            [
                {
                    "agent": r["agent"],
                    "sample": r["sample_id"],
                    "verdict": r["verdict"],
                    "bad_turn": r["bad_turn"],
                    "reason": r["reason"],
                }
                for r in records
                if r["verdict"] != "pass" and r["grader_version"] == grader_version
            ],
            ["agent", "sample", "verdict", "bad_turn", "reason"],
        )
    )
)

# %% [markdown]
# ## State extractor: key-level accuracy against the hand labels
#
# Agents that report no state are read by an extractor; below the threshold its results are not
# trusted and those samples are `undetermined`. The labels hold the reference replies and free
# paraphrases of them.

# %%
if records_path is None:
    acc_rows = []
    for source in ("reference", "paraphrase", None):
        labs = [l for l in suite.labels if source is None or l.get("source") == source]
        sc = extractor_accuracy(RuleExtractor(), labs)
        acc_rows.append(
            {
                "extractor": "rules-v1",
                "labels": source or "all",
                "keys": sc.units,
                "accuracy": round(sc.accuracy, 3),
                "trusted (>= %.2f)" % DEFAULT_CONFIG.extractor_threshold: sc.trusted(
                    DEFAULT_CONFIG.extractor_threshold
                ),
            }
        )
    display(HTML(rows_table(acc_rows, list(acc_rows[0]))))

# %% [markdown]
# ## Cross-session memory (user x topic): remembered or guessed right?

# %%
mem = [
    {
        "agent": r["agent"],
        "sample": r["sample_id"],
        "with earlier session": r["verdict"],
        "without": r.get("extra", {}).get("without_prior"),
        "memory": r.get("extra", {}).get("memory"),
        "memory system": r.get("extra", {}).get("memory_system", "(replayed transcript)"),
        "needed facts retrieved": r.get("extra", {}).get("retrieved"),
    }
    for r in records
    if r.get("unit_type") == "user_topic"
]
display(
    HTML(
        rows_table(
            mem,
            ["agent", "sample", "with earlier session", "without", "memory", "memory system", "needed facts retrieved"],
        )
    )
)
