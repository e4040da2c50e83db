"""The built-in bench: one person's life told through ~17 months of conversations (lifelog.md).

``generate(preset, seed, out)`` writes a bench folder (manifest, four nested tiers, photos);
``filler_sessions`` makes everyday filler talk on given dates (for haystack padding).

Names load on first use: reading :data:`PRESETS` (a sweep spec's check, ``memeval generate``'s
choices) does not import the generator and its photo drawing (PIL), ~0.05 CPU-s a notebook kernel
skips when its bench already exists.

>>> from memeval.bench import lifelog
>>> sorted(lifelog.PRESETS)[:2], callable(lifelog.generate)
(['demo', 'full'], True)
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .filler import filler_sessions
    from .generator import GENERATOR_NAME, GENERATOR_VERSION, build, generate
    from .presets import PRESETS, TIER_NAMES, Preset

#: public name -> the submodule defining it
_WHERE = {
    "generate": "generator",
    "build": "generator",
    "GENERATOR_NAME": "generator",
    "GENERATOR_VERSION": "generator",
    "filler_sessions": "filler",
    "PRESETS": "presets",
    "TIER_NAMES": "presets",
    "Preset": "presets",
}

__all__ = [
    "generate",
    "build",
    "filler_sessions",
    "PRESETS",
    "TIER_NAMES",
    "Preset",
    "GENERATOR_NAME",
    "GENERATOR_VERSION",
]


def __getattr__(name: str) -> object:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value  # once: later reads are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
