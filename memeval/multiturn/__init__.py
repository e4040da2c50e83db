"""Multi-turn task evaluation: samples cut by goal, state assertions with ``bad_turn``, replay with
fixed inputs and tool returns, three-run verdicts, stratified pass rates, cross-session memory.

The contract is the project's multi-turn spec; the modules are small and each has one job:
``sample`` (the data model) + ``sample_io`` (loading, writing), ``split``, ``assertions`` (state
assertions, ``check_state``), ``domain`` + ``suite`` / ``suite_sessions`` / ``suite_samples`` (the
built-in suite), ``agents`` / ``llm_agent`` (agents under test), ``tools`` + ``toolsets`` (what a
replay calls), ``replay`` (``replay_once``), ``rules`` (final rules, process, guards), ``judge`` (a
``scoring.judge.JudgeProtocol``), ``extractor``, ``config``, ``grade`` (a run's verdict, three runs
combined), ``crosssession``, ``runner`` (``run_sample``, ``run_suite``), ``records``
(``read_sample_records``), ``rates``, ``breakdown``. Their tables, plots and drill-down widget are
in the analysis layer (``memeval.analysis.multiturn_render``, ``multiturn_plots``,
``multiturn_widget``).
"""

from .agents import SCRIPTED_AGENTS, Agent, AgentStep, make_agent
from .assertions import Snapshot, StateCheck, UnknownModeError, check_state
from .config import DEFAULT_CONFIG, STRATA, GraderConfig
from .grade import VERDICTS, SampleResult, grade_run
from .rates import MixedVersionsError, format_pass_rates, pass_rates, pass_rates_by_version, results_frame
from .replay import replay_once
from .records import read_sample_records
from .runner import run_sample, run_suite
from .toolsets import fixture_tools, live_tools
from .sample import Sample, StateExpect
from .sample_io import read_samples, sample_from_dict, sample_to_dict, write_samples
from .split import split_session
from .suite import generate_suite, load_suite, save_suite

__all__ = [
    "SCRIPTED_AGENTS",
    "Agent",
    "AgentStep",
    "make_agent",
    "fixture_tools",
    "live_tools",
    "run_suite",
    "Snapshot",
    "StateCheck",
    "UnknownModeError",
    "check_state",
    "DEFAULT_CONFIG",
    "STRATA",
    "GraderConfig",
    "VERDICTS",
    "SampleResult",
    "grade_run",
    "run_sample",
    "MixedVersionsError",
    "format_pass_rates",
    "pass_rates",
    "pass_rates_by_version",
    "results_frame",
    "replay_once",
    "read_sample_records",
    "Sample",
    "StateExpect",
    "read_samples",
    "sample_from_dict",
    "sample_to_dict",
    "write_samples",
    "split_session",
    "generate_suite",
    "load_suite",
    "save_suite",
]
