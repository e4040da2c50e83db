"""Which tools a sample's replay calls: the recorded returns (replay mode), the live tools compared
with the recording (health-check mode), or the user's own tool runner (``module:function``)."""

from __future__ import annotations

import importlib
import inspect
from typing import Callable

from ..errors import InputError
from .domain import LOOKUP_TOOLS, TOOLS, WRITE_TOOLS, World
from .sample import Sample
from .suite import Suite
from .tools import FixtureTools, LiveTools, ToolSource

__all__ = ["fixture_tools", "live_tools", "load_tool_runner", "registry", "READ_ONLY_TOOLS"]

READ_ONLY_TOOLS = frozenset(TOOLS) - WRITE_TOOLS


def registry(suite: Suite, sample: Sample) -> frozenset[str]:
    """The tool names of the sample's config snapshot (the built-in registry when it lists none)."""
    tools = (suite.configs.get(sample.replay.config_snapshot) or {}).get("tools")
    return frozenset(tools) if isinstance(tools, dict) and tools else frozenset(TOOLS)


def fixture_tools(suite: Suite) -> Callable[[Sample], ToolSource]:
    """Replay mode: the recorded returns only; a tool outside the registry is the agent's fault."""
    return lambda s: FixtureTools(
        suite.fixtures[s.replay.tool_fixture], READ_ONLY_TOOLS, LOOKUP_TOOLS, registry(suite, s)
    )


def live_tools(
    suite: Suite, world: World | None = None, call: Callable[[str, dict], object] | None = None
) -> Callable[[Sample], ToolSource]:
    """Health-check mode: call the (possibly changed) live tools and compare with the recording.
    ``call(name, args)`` runs the user's own tools (see :func:`load_tool_runner`); default: the
    built-in world's."""
    run = call or (world or suite.world()).call
    return lambda s: LiveTools(run, suite.fixtures.get(s.replay.tool_fixture), known=registry(suite, s))


def load_tool_runner(spec: str) -> Callable[[str, dict], object]:
    """``module:attr`` -> a callable ``(name, args) -> result``: the attribute itself, or what it
    returns when called without arguments (a factory)."""
    mod, _, attr = spec.partition(":")
    if not mod or not attr:
        raise InputError("<command line>", None, "--tool-runner", f"{spec!r} is not 'module:function'")
    try:
        obj = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise InputError("<command line>", None, "--tool-runner", f"cannot load {spec}: {e}") from None
    try:
        takes_two = len(inspect.signature(obj).parameters) >= 2
    except (TypeError, ValueError):
        takes_two = True
    return obj if takes_two else obj()
