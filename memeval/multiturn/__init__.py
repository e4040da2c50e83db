"""Multi-turn task evaluation: samples cut by goal, state assertions with ``bad_turn``, replay with
fixed inputs and tool returns, three-run verdicts, stratified pass rates, cross-session memory.

The contract is the project's multi-turn spec; the modules are small and each has one job:
``sample`` (data + loading), ``split``, ``check`` (``check_state``), ``domain`` + ``suite`` (the
built-in suite), ``agents`` / ``llm_agent`` (agents under test), ``tools`` + ``replay``,
``checks`` (final rules, process, guards), ``judge``, ``extractor``, ``config``, ``grade``,
``crosssession``, ``runner``, ``records``, ``rates``, ``render``.
"""

from .agents import SCRIPTED_AGENTS, Agent, AgentStep, make_agent
from .check import Snapshot, StateCheck, UnknownModeError, check_state
from .config import DEFAULT_CONFIG, STRATA, GraderConfig
from .grade import VERDICTS, SampleResult, grade_run, run_sample
from .rates import MixedVersionsError, format_pass_rates, pass_rates, pass_rates_by_version, results_frame
from .replay import replay_once
from .runner import fixture_tools, live_tools, run_suite
from .sample import Sample, StateExpect, read_samples, sample_from_dict, sample_to_dict, write_samples
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
