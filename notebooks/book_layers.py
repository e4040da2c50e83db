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
# # The book suite by layer ("AI Agents in Depth", chapter 3)
#
# 60 cases in three layers: **Layer 1** basic recall of a stated fact, **Layer 2** disambiguation among
# similar entities held in separate conversations, **Layer 3** proactive synthesis across conversations.
# The offline metric is **keyword recall**: the share of a case's required facts that appear in the
# answer (lower-cased, white space collapsed, any listed variant as a substring); a case passes at 0.8.
# Only the 8 cases with gold facts are scored; layer and overall figures are means over those cases.
#
# Part 1 reproduces the chapter's comparison table from its canned answers. Part 2 runs memeval's
# built-in systems on all 60 cases (dry mode: a system without an answer of its own is read as its
# returned memories) and scores them the same way. `oracle` is handed the turns that contain a gold fact,
# so it is the ceiling of what is recoverable from the conversations; `no_memory` is the floor.

# %% tags=["parameters"]
# suite_dir: the book suite folder (test_cases/, fixtures/); None = the copy shipped with the tests
suite_dir = None
# responses: {system: {test_id: answer}}; None = the suite's fixtures/system_responses.example.json
responses = None
# systems: memeval systems to run on the 60 cases ([] skips part 2)
systems = ["no_memory", "bm25", "oracle", "recent"]
# work_dir: where the imported bench and the runs go; None = a temporary folder
work_dir = None
# judge_url, judge_model: an OpenAI-compatible endpoint for the rubric judge (part 3); None skips it
judge_url = None
judge_model = None
judge_key_env = "OPENAI_API_KEY"

# %%
import tempfile
from pathlib import Path

from IPython.display import HTML, display

from memeval import anchored, html_table
from memeval import builtin_runs, case_frame, default_suite_dir, layer_figure, layer_html, stored_scores
from memeval import setup_notebook
from memeval import load_booksuite, read_booksuite_responses as read_responses
from memeval import read_records
from memeval import booksuite_table_text as format_table, layer_table, score_answer_sets

setup_notebook()  # plotly renders in JupyterLab and in offline HTML reports (plotly.js embedded once)
suite_dir = anchored(suite_dir) if suite_dir else default_suite_dir()
suite = load_booksuite(suite_dir)
print(f"{len(suite.cases)} cases from {suite_dir}; gold facts for {len(suite.gold)}")

# %% [markdown]
# ## 1. The chapter's comparison (canned answers)

# %%
canned = read_responses(
    anchored(responses) if responses else suite_dir / "fixtures" / "system_responses.example.json",
    {c.test_id for c in suite.cases},
)
canned_scores = score_answer_sets(suite, canned)
canned_rows = layer_table(canned_scores, list(canned))
print(format_table(canned_rows, "keyword-recall", canned_scores))
display(HTML(layer_html(canned_rows, canned_scores, "keyword recall, canned answers")))

# %%
layer_figure(canned_rows, "Keyword recall by layer: the chapter's four memory configurations", scores=canned_scores)

# %% [markdown]
# ## 2. memeval's built-in systems on all 60 cases

# %%
if systems:
    work = anchored(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="book-layers-"))
    runs = builtin_runs(suite, systems, work)
    answered = {s: sum(r["error"] is None for r in read_records(d)) for s, d in runs.items()}
    print("answers per system:", ", ".join(f"{s} {n}" for s, n in answered.items()))
    run_scores = stored_scores(suite, runs)  # keyword recall as each run's records hold it: not scored again
    run_rows = layer_table(run_scores, list(runs))
    print(format_table(run_rows, "keyword-recall", run_scores))
    display(HTML(layer_html(run_rows, run_scores, "keyword recall, memeval built-in systems")))
    display(HTML(html_table(case_frame(run_scores), caption="keyword recall per case and system (– = not scored)")))
else:
    run_rows = []
    print("no systems to run")

# %%
if run_rows:
    display(layer_figure(run_rows, "Keyword recall by layer: memeval built-in systems (dry mode)", scores=run_scores))

# %% [markdown]
# ## 3. The rubric judge on the canned answers (optional)
#
# Four 1-4 grades (precision, recall, reasoning, proactivity), each with evidence, and a hallucination
# veto; reward = mean((grade - 1) / 3), 0 under a veto; success = precision, recall and reasoning at least
# 3 and no veto. A verdict without evidence, or a judge call that fails, leaves the case **ungraded**
# (counted, never 0). Runs only when `judge_url` and `judge_model` are set.

# %%
if judge_url and judge_model:
    from memeval import ChatClient
    from memeval import RubricJudge

    judge = RubricJudge(ChatClient(judge_url, judge_model, api_key_env=judge_key_env, temperature=0))
    judged = score_answer_sets(suite, canned, "judge", judge)
    judged_rows = layer_table(judged, list(canned))
    print(format_table(judged_rows, "judge", judged))
    print("judge:", ", ".join(f"{k} {v}" for k, v in judge.identity().items()))
    display(HTML(layer_html(judged_rows, judged, "rubric-judge reward")))
    display(layer_figure(judged_rows, "Rubric-judge reward by layer", metric="judge reward", scores=judged))
else:
    print("rubric judge skipped (set judge_url and judge_model)")
