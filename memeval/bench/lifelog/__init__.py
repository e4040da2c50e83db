"""The built-in bench: one person's life told through ~17 months of conversations (lifelog.md).

``generate(preset, seed, out)`` writes a bench folder (manifest, four nested tiers, photos);
``filler_sessions`` makes everyday filler talk on given dates (for haystack padding).
"""

from .filler import filler_sessions
from .generator import GENERATOR_NAME, GENERATOR_VERSION, build, generate
from .presets import PRESETS, TIER_NAMES, Preset

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
