"""memeval: a workbench for measuring long-term memory in LLM systems.

``memeval.__all__`` is the documented API (pinned by ``tests/test_public_api.py``); notebooks and
examples import from here only. Names load on first use (``import memeval`` stays cheap for the
command line; the names differ from the subpackages ``memeval.run`` and ``memeval.audit``, which
Python binds on the package once imported)::

    import memeval
    bench = memeval.generate("tiny", 1, "data/lifelog-tiny-s1")
    run_dir = memeval.run_system(bench, "bm25")
    df = memeval.load_runs([run_dir])       # polars; df.to_pandas() for pandas
    memeval.plots.degradation_curve(df)

Two groups: :data:`CORE` (benches, systems, runs, records, analysis entry points, errors; each with a
runnable example) and :data:`NOTEBOOK` (what the shipped notebooks call: tables, widgets, the judges,
book-suite and multi-turn helpers; each documented and run by the notebook tests).

>>> import memeval
>>> sorted(memeval.CORE)[:4]
['BaseMemorySystem', 'Capabilities', 'InputError', 'Manifest']
>>> memeval.make_system("bm25:k=3").params
{'k': 3}
"""

from __future__ import annotations

import sys as _sys

if _sys.argv[:1] == ["-m"]:  # ``python -m memeval``: this package is imported before __main__ runs
    import _signal
    import os as _os

    def _interrupted(signum: int, frame: object) -> None:  # Ctrl-C this early: one line (memeval/__main__.py)
        _os.write(2, b"memeval: interrupted\n")
        _os._exit(130)  # nothing is open yet; unwinding a half-imported extension module could crash

    _signal.signal(_signal.SIGINT, _interrupted)

from importlib import import_module  # noqa: E402

from ._version import __version__  # noqa: E402

# ``typing`` is not imported here: ``python -m memeval`` imports this package before its Ctrl-C handler
# is installed (memeval/__main__.py), so this module stays as small as it can be
TYPE_CHECKING = False

#: public name -> (module, attribute or None for the module itself): benches, systems, runs, analysis
_CORE = {
    "generate": ("memeval.bench.lifelog", "generate"),
    "load_bench": ("memeval.bench.io", "load_bench"),
    "audit_bench": ("memeval.audit", "audit"),
    "make_system": ("memeval.systems.registry", "make_system"),
    "MemorySystem": ("memeval.systems.base", "MemorySystem"),
    "BaseMemorySystem": ("memeval.systems.base", "BaseMemorySystem"),
    "Capabilities": ("memeval.systems.base", "Capabilities"),
    "Recall": ("memeval.systems.base", "Recall"),
    "Memory": ("memeval.systems.base", "Memory"),
    "RunConfig": ("memeval.run.runner", "RunConfig"),
    "run_system": ("memeval.run.runner", "run_system"),
    "regrade": ("memeval.run.regrade", "regrade_run"),
    "attribute": ("memeval.analysis.attribution", "attribute_run"),
    "Record": ("memeval.run.records", "Record"),
    "read_records": ("memeval.run.records", "read_records"),
    "Manifest": ("memeval.run.manifest", "Manifest"),
    "load_runs": ("memeval.workbench", "load_runs"),
    "plots": ("memeval.analysis.plots", None),
    "intervals": ("memeval.analysis.intervals", None),
    "TraceBrowser": ("memeval.analysis.widgets", "TraceBrowser"),
    "render_report": ("memeval.analysis.report", "render_report"),
    "MemevalError": ("memeval.errors", "MemevalError"),
    "InputError": ("memeval.errors", "InputError"),
    "SystemCallError": ("memeval.errors", "SystemCallError"),
}
#: public name -> (module, attribute): what the shipped notebooks use beyond the core
_NOTEBOOK = {
    "setup_notebook": ("memeval.analysis.notebook_setup", "setup_notebook"),
    "ensure_bench": ("memeval.workbench", "ensure_bench"),
    "run_systems": ("memeval.workbench", "run_systems"),
    "run_served": ("memeval.workbench", "run_served"),
    "run_folders": ("memeval.workbench", "run_folders"),
    "label_systems": ("memeval.workbench", "label_systems"),
    "bench_of_run": ("memeval.workbench", "bench_of_run"),
    "read_manifest": ("memeval.run.folder", "read_manifest"),
    "lafs_frontiers": ("memeval.analysis.lafs", "lafs_frontiers"),
    "sweep_systems": ("memeval.workbench", "sweep_systems"),
    "anchored": ("memeval.workspace", "anchored"),
    "load_prices": ("memeval.run.cost", "load_prices"),
    "ChatClient": ("memeval.llm", "ChatClient"),
    "aggregate": ("memeval.analysis.aggregate", None),
    "dry_validity_gate": ("memeval.analysis.aggregate", "dry_validity_gate"),
    "html_table": ("memeval.analysis.tables", "html_table"),
    "gate_html": ("memeval.analysis.tables", "gate_html"),
    "rows_table": ("memeval.analysis.tables", "rows_table"),
    "side_by_side": ("memeval.analysis.tables", "side_by_side"),
    "compare_runs": ("memeval.analysis.fairness", "compare_runs"),
    "natural_key": ("memeval.analysis.plot_base", "natural_key"),
    "with_interval_text": ("memeval.analysis.tables", "with_interval_text"),
    "cost_table": ("memeval.analysis.costs", "cost_table"),
    "operating_points": ("memeval.analysis.costs", "operating_points"),
    "with_prices": ("memeval.analysis.costs", "with_prices"),
    "paired_differences": ("memeval.analysis.intervals", "paired_differences"),
    "paired_diff": ("memeval.analysis.pairs", "paired_diff"),
    "sweep_table": ("memeval.analysis.sweeps", "sweep_table"),
    "evidence_texts": ("memeval.analysis.widgets", "evidence_texts"),
    "render_trace_html": ("memeval.analysis.widgets", "render_trace_html"),
    "with_flips": ("memeval.analysis.widgets", "with_flips"),
    "worst_questions_table": ("memeval.analysis.widgets", "worst_questions_table"),
    "attributed": ("memeval.analysis.attribution", "attributed"),
    "attribution_split": ("memeval.analysis.plot_attribution", "attribution_split"),
    "judges": ("memeval.analysis.judges", None),
    "two_gradings": ("memeval.analysis.judges_run", "two_gradings"),
    "grade_leniency": ("memeval.analysis.judges_run", "grade_leniency"),
    "build_probes": ("memeval.scoring.leniency", "build_probes"),
    "stub_endpoints": ("memeval.testing.judge_stubs", "stub_endpoints"),
    "RubricJudge": ("memeval.scoring.rubric", "RubricJudge"),
    "load_booksuite": ("memeval.bench.loaders.booksuite", "load_booksuite"),
    "read_booksuite_responses": ("memeval.bench.loaders.booksuite_answers", "read_responses"),
    "score_answer_sets": ("memeval.scoring.booksuite_scores", "score_answer_sets"),
    "layer_table": ("memeval.scoring.booksuite_scores", "layer_table"),
    "booksuite_table_text": ("memeval.scoring.booksuite_scores", "format_table"),
    "builtin_runs": ("memeval.analysis.booksuite", "builtin_runs"),
    "case_frame": ("memeval.analysis.booksuite", "case_frame"),
    "default_suite_dir": ("memeval.analysis.booksuite", "default_suite_dir"),
    "layer_figure": ("memeval.analysis.booksuite", "layer_figure"),
    "layer_html": ("memeval.analysis.booksuite", "layer_html"),
    "stored_scores": ("memeval.analysis.booksuite", "stored_scores"),
    "generate_suite": ("memeval.multiturn.suite", "generate_suite"),
    "load_suite": ("memeval.multiturn.suite", "load_suite"),
    "save_suite": ("memeval.multiturn.suite", "save_suite"),
    "run_suite": ("memeval.multiturn.runner", "run_suite"),
    "make_agent": ("memeval.multiturn.agents", "make_agent"),
    "MULTITURN_GRADER_CONFIG": ("memeval.multiturn.config", "DEFAULT_CONFIG"),
    "RuleExtractor": ("memeval.multiturn.extractor", "RuleExtractor"),
    "extractor_accuracy": ("memeval.multiturn.extractor", "extractor_accuracy"),
    "pass_rates": ("memeval.multiturn.rates", "pass_rates"),
    "wilson_interval": ("memeval.multiturn.rates", "wilson_interval"),
    "results_frame": ("memeval.multiturn.rates", "results_frame"),
    "read_sample_records": ("memeval.multiturn.records", "read_sample_records"),
    "latest_sample_records": ("memeval.multiturn.breakdown", "latest"),
    "bad_turn_histogram": ("memeval.multiturn.breakdown", "bad_turn_histogram"),
    "correction_breakdown": ("memeval.multiturn.breakdown", "correction_breakdown"),
    "process_directions": ("memeval.multiturn.breakdown", "process_directions"),
    "bad_turn_figure": ("memeval.analysis.multiturn_plots", "bad_turn_figure"),
    "shares_figure": ("memeval.analysis.multiturn_plots", "shares_figure"),
    "strata_figure": ("memeval.analysis.multiturn_plots", "strata_figure"),
    "failed_records": ("memeval.analysis.multiturn_render", "failed_records"),
    "render_sample": ("memeval.analysis.multiturn_render", "render_sample"),
    "drilldown": ("memeval.analysis.multiturn_widget", "drilldown"),
}
_PUBLIC = _CORE | _NOTEBOOK
CORE = tuple(_CORE)
NOTEBOOK = tuple(_NOTEBOOK)

if TYPE_CHECKING:  # what a type checker sees; at run time the names load on first use (below)
    from typing import Any

    from .bench.lifelog import generate
    from .bench.io import load_bench
    from .audit import audit as audit_bench
    from .systems.registry import make_system
    from .systems.base import MemorySystem
    from .systems.base import BaseMemorySystem
    from .systems.base import Capabilities
    from .systems.base import Recall
    from .systems.base import Memory
    from .run.runner import RunConfig
    from .run.runner import run_system
    from .run.regrade import regrade_run as regrade
    from .analysis.attribution import attribute_run as attribute
    from .run.records import Record
    from .run.records import read_records
    from .run.manifest import Manifest
    from .workbench import load_runs
    from .analysis import plots
    from .analysis import intervals
    from .analysis.widgets import TraceBrowser
    from .analysis.report import render_report
    from .errors import MemevalError
    from .errors import InputError
    from .errors import SystemCallError
    from .analysis.notebook_setup import setup_notebook
    from .workbench import ensure_bench
    from .workbench import run_systems
    from .workbench import run_served
    from .workbench import run_folders
    from .workbench import label_systems
    from .workbench import bench_of_run
    from .run.folder import read_manifest
    from .analysis.lafs import lafs_frontiers
    from .workbench import sweep_systems
    from .workspace import anchored
    from .run.cost import load_prices
    from .llm import ChatClient
    from .analysis import aggregate
    from .analysis.aggregate import dry_validity_gate
    from .analysis.tables import html_table
    from .analysis.tables import gate_html
    from .analysis.tables import rows_table
    from .analysis.tables import side_by_side
    from .analysis.fairness import compare_runs
    from .analysis.plot_base import natural_key
    from .analysis.tables import with_interval_text
    from .analysis.costs import cost_table
    from .analysis.costs import operating_points
    from .analysis.costs import with_prices
    from .analysis.intervals import paired_differences
    from .analysis.pairs import paired_diff
    from .analysis.sweeps import sweep_table
    from .analysis.widgets import evidence_texts
    from .analysis.widgets import render_trace_html
    from .analysis.widgets import with_flips
    from .analysis.widgets import worst_questions_table
    from .analysis.attribution import attributed
    from .analysis.plot_attribution import attribution_split
    from .analysis import judges
    from .analysis.judges_run import two_gradings
    from .analysis.judges_run import grade_leniency
    from .scoring.leniency import build_probes
    from .testing.judge_stubs import stub_endpoints
    from .scoring.rubric import RubricJudge
    from .bench.loaders.booksuite import load_booksuite
    from .bench.loaders.booksuite_answers import read_responses as read_booksuite_responses
    from .scoring.booksuite_scores import score_answer_sets
    from .scoring.booksuite_scores import layer_table
    from .scoring.booksuite_scores import format_table as booksuite_table_text
    from .analysis.booksuite import builtin_runs
    from .analysis.booksuite import case_frame
    from .analysis.booksuite import default_suite_dir
    from .analysis.booksuite import layer_figure
    from .analysis.booksuite import layer_html
    from .analysis.booksuite import stored_scores
    from .multiturn.suite import generate_suite
    from .multiturn.suite import load_suite
    from .multiturn.suite import save_suite
    from .multiturn.runner import run_suite
    from .multiturn.agents import make_agent
    from .multiturn.config import DEFAULT_CONFIG as MULTITURN_GRADER_CONFIG
    from .multiturn.extractor import RuleExtractor
    from .multiturn.extractor import extractor_accuracy
    from .multiturn.rates import pass_rates
    from .multiturn.rates import wilson_interval
    from .multiturn.rates import results_frame
    from .multiturn.records import read_sample_records
    from .multiturn.breakdown import latest as latest_sample_records
    from .multiturn.breakdown import bad_turn_histogram
    from .multiturn.breakdown import correction_breakdown
    from .multiturn.breakdown import process_directions
    from .analysis.multiturn_plots import bad_turn_figure
    from .analysis.multiturn_plots import shares_figure
    from .analysis.multiturn_plots import strata_figure
    from .analysis.multiturn_render import failed_records
    from .analysis.multiturn_render import render_sample
    from .analysis.multiturn_widget import drilldown

__all__ = ["__version__", "CORE", "NOTEBOOK", *_PUBLIC]


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562)."""
    try:
        module, attr = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'memeval' has no attribute {name!r}") from None
    value = import_module(module) if attr is None else getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
