"""The versioned grading config: blend, gates, process weights, vetoes and grader version.

The whole config (and its hash) is stored with every result, so a score can always be traced to
the ruler that produced it; results of two grader versions are never mixed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property

__all__ = ["GraderConfig", "DEFAULT_CONFIG", "STRATA"]

# (name, lowest turns, highest turns or None, fixed weight)
STRATA: tuple[tuple[str, int, int | None, float], ...] = (("1-3", 1, 3, 0.2), ("4-8", 4, 8, 0.5), ("9+", 9, None, 0.3))


@dataclass(frozen=True)
class GraderConfig:
    grader_version: str = "r5"
    config_version: str = "mt-1"
    final_weights: dict = field(default_factory=lambda: {"state_expect": 0.5, "final_expect": 0.5})
    coverage_gate: float = 0.8
    process_weights: dict = field(
        default_factory=lambda: {"tool_choice": 0.4, "clarify_timing": 0.3, "repeat_action": 0.3}
    )
    min_turns: int = 4
    veto: tuple[str, ...] = ("unconfirmed_write", "stale_state_used")
    blend: dict = field(default_factory=lambda: {"final": 0.6, "process": 0.3, "guard": 0.1})
    fallback: str = "undetermined"
    extractor_threshold: float = 0.9
    runs: int = 3
    pass_runs: int = 2
    judge_model: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["veto"] = list(self.veto)
        return d

    @cached_property
    def config_id(self) -> str:
        blob = json.dumps(self.to_dict(), sort_keys=True).encode()
        return "gc_" + hashlib.sha256(blob).hexdigest()[:12]

    def with_(self, **kw) -> "GraderConfig":
        return replace(self, **kw)

    @classmethod
    def from_dict(cls, d: dict) -> "GraderConfig":
        d = dict(d)
        if "veto" in d:
            d["veto"] = tuple(d["veto"])
        return cls(**d)


DEFAULT_CONFIG = GraderConfig()
