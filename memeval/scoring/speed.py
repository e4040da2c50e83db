"""Speed points and latency statistics (benchmark.md §5).

The figure is *latency minus round trip* (``max(1, latency - network)``), not "compute time".
Per question ``r = latency / target``: ``r <= 0.5`` → +1, ``r >= 4`` → −1, in between
``-log2(r)``, halved on the slow side (r = 1 → 0, r = 2 → −0.5, r = 4 → −1); clamped to [−1, 1].
Aggregate by averaging, never summing. A question whose round trip is at least 90% of its total
latency is unmeasurable: it is removed from the speed figure with its reason, never scored 0.
"""

from __future__ import annotations

import math
from typing import Iterable
from ..errors import ArgumentError

__all__ = [
    "DEFAULT_TARGET_MS",
    "quantile",
    "UNMEASURABLE_RTT_SHARE",
    "latency_minus_rtt",
    "speed_points",
    "speed_status",
    "percentiles",
    "mean_speed_points",
]

DEFAULT_TARGET_MS = 500.0
#: A round trip at or above this share of the total latency leaves nothing measurable.
UNMEASURABLE_RTT_SHARE = 0.9


def _finite_non_negative(name: str, value: float) -> float:
    v = float(value)
    if math.isnan(v) or v < 0:
        raise ArgumentError(f"{name} must be a non-negative number, got {value!r}")
    return v


def latency_minus_rtt(latency_ms: float, network_ms: float | None) -> float:
    """``max(1, latency_ms - network_ms)``; a missing network floor (None) subtracts nothing."""
    lat = _finite_non_negative("latency_ms", latency_ms)
    net = 0.0 if network_ms is None else _finite_non_negative("network_ms", network_ms)
    return max(1.0, lat - net)


def speed_points(latency_ms: float, target_ms: float = DEFAULT_TARGET_MS) -> float:
    """Points in [−1, 1] for one question's latency (pass latency minus round trip)."""
    lat = _finite_non_negative("latency_ms", latency_ms)
    target = float(target_ms)
    if not target > 0 or math.isinf(target):
        raise ArgumentError(f"target_ms must be a positive finite number, got {target_ms!r}")
    r = lat / target
    if r <= 0.5:
        return 1.0
    if r >= 4.0:
        return -1.0
    v = -math.log2(r)
    if v < 0:
        v /= 2.0
    return max(-1.0, min(1.0, v)) + 0.0  # + 0.0 turns -0.0 (r = 1) into 0.0


def speed_status(latency_ms: float | None, network_ms: float | None) -> tuple[str, str | None]:
    """("measured", None), or ("unmeasurable", reason) when nothing measurable is left."""
    if latency_ms is None:
        return "unmeasurable", "no latency recorded"
    if network_ms is None:
        return "unmeasurable", "no network floor measured"
    lat = _finite_non_negative("latency_ms", latency_ms)
    net = _finite_non_negative("network_ms", network_ms)
    if lat <= 0 or net >= UNMEASURABLE_RTT_SHARE * lat:
        share = 100.0 if lat <= 0 else 100.0 * net / lat
        return "unmeasurable", (
            f"round trip {net:.1f} ms is {share:.0f}% of the total {lat:.1f} ms (>= {UNMEASURABLE_RTT_SHARE:.0%})"
        )
    return "measured", None


def quantile(sorted_values: list[float], q: float) -> float:
    """The ``q`` (0..1) quantile of sorted values: linear interpolation between closest ranks
    (numpy's default, Hyndman-Fan type 7)."""
    n = len(sorted_values)
    pos = (n - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def percentiles(samples: Iterable[float | None]) -> dict[str, float | int | None]:
    """p50/p90/p95/p99/max and n of the samples (None entries are not samples and are skipped)."""
    values = sorted(float(s) for s in samples if s is not None)
    if any(math.isnan(v) for v in values):
        raise ArgumentError("latency samples contain NaN")
    if not values:
        return {"p50": None, "p90": None, "p95": None, "p99": None, "max": None, "n": 0}
    out: dict[str, float | int | None] = {f"p{int(q * 100)}": quantile(values, q) for q in (0.5, 0.9, 0.95, 0.99)}
    out["max"] = values[-1]
    out["n"] = len(values)
    return out


def mean_speed_points(points: Iterable[float | None]) -> float | None:
    """The speed figure: the average (never the sum) of the measured questions' points."""
    vals = [p for p in points if p is not None]
    return sum(vals) / len(vals) if vals else None
