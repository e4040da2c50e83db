"""Preset sizes: ``tiny`` (tests), ``demo`` (the main job), ``full`` (glasshouse scale).

Tier targets are (core, small, medium, full); core is the story alone. ``axes`` counts the story
axes; IMAGE, XLING_STORE/XLING_QUERY and FALSE_MEMORY counts follow from the other fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

__all__ = ["Preset", "PRESETS", "TIER_NAMES"]

TIER_NAMES: tuple[str, ...] = ("core", "small", "medium", "full")


@dataclass(frozen=True)
class Preset:
    name: str
    story_sessions: int
    tier_turns: tuple[int, int, int, int]
    tier_sessions: tuple[int, int, int, int]
    axes: Mapping[str, int] = field(default_factory=dict)
    fm: tuple[int, int, int] = (1, 1, 1)  # false-memory questions in the main set: swap, invert, ghost
    probes: tuple[int, int, int] = (3, 3, 3)  # the 'probes' question set (its own files): swap, invert, ghost
    photos: int = 3
    photo_questions: int = 3
    lang_sessions: int = 1  # per language
    xs_per_session: int = 1
    xq_per_lang: int = 1
    lang_glue_pairs: int = 1
    #: First names in play: about five story people share each, whatever the cast size, so a first name
    #: narrows a question down about as much in every preset.
    first_names: int = 100

    @property
    def n_questions(self) -> int:
        """Questions in the main set of the top tier (the probes set holds ``sum(probes)`` more)."""
        return (
            sum(self.axes.values())
            + sum(self.fm)
            + self.photos * self.photo_questions
            + 10 * (self.lang_sessions * self.xs_per_session + self.xq_per_lang)
        )


PRESETS: dict[str, Preset] = {
    "tiny": Preset(
        "tiny",
        story_sessions=8,
        tier_turns=(96, 200, 280, 420),
        tier_sessions=(8, 22, 28, 40),
        axes={
            "BASIC": 10,
            "PARAPHRASE": 5,
            "TEMPORAL": 5,
            "UPDATE": 3,
            "GATHER": 3,
            "RECONCILE": 3,
            "MULTI": 4,
            "IMPLICIT": 3,
            "CROSS": 4,
            "CONFLICT": 4,
            "STALE": 2,
            "CONTRADICT": 2,
            "ABSTAIN": 2,
        },
        fm=(1, 1, 1),
        probes=(3, 3, 3),
        photos=3,
        photo_questions=3,
        lang_sessions=1,
        xs_per_session=1,
        xq_per_lang=1,
        lang_glue_pairs=1,
    ),
    "demo": Preset(
        "demo",
        story_sessions=36,
        tier_turns=(720, 2400, 4800, 14400),
        tier_sessions=(36, 110, 160, 420),
        axes={
            "BASIC": 80,
            "PARAPHRASE": 40,
            "TEMPORAL": 30,
            "UPDATE": 28,
            "GATHER": 24,
            "RECONCILE": 18,
            "MULTI": 30,
            "IMPLICIT": 18,
            "CROSS": 26,
            "CONFLICT": 20,
            "STALE": 22,
            "CONTRADICT": 14,
            "ABSTAIN": 14,
        },
        fm=(5, 5, 5),
        probes=(24, 12, 24),
        photos=50,
        photo_questions=3,
        lang_sessions=2,
        xs_per_session=3,
        xq_per_lang=12,
        lang_glue_pairs=3,
    ),
    # Glasshouse scale: 1,547 questions on 14 axes (incl. 150 IMAGE), 500 false-memory probes (in the
    # 'probes' set), 800 cross-language questions; tiers 1,882 / 7,186 / 12,884 / 103,572 turns. ABSTAIN
    # is 60 (40 moved to BASIC) and the main set keeps 12 false-memory questions, so that answering
    # "I don't know" to everything stays well under the audit's 20% in the core tier (which lacks the
    # weight-1 IMAGE and XLING_STORE questions).
    "full": Preset(
        "full",
        story_sessions=96,
        tier_turns=(1882, 7186, 12884, 103572),
        tier_sessions=(96, 259, 364, 1991),
        axes={
            "BASIC": 310,
            "PARAPHRASE": 140,
            "TEMPORAL": 120,
            "UPDATE": 110,
            "GATHER": 90,
            "RECONCILE": 70,
            "MULTI": 107,
            "IMPLICIT": 70,
            "CROSS": 90,
            "CONFLICT": 80,
            "STALE": 90,
            "CONTRADICT": 60,
            "ABSTAIN": 60,
        },
        fm=(4, 4, 4),
        probes=(200, 100, 200),
        photos=50,
        photo_questions=3,
        lang_sessions=10,
        xs_per_session=4,
        xq_per_lang=40,
        lang_glue_pairs=4,
        first_names=442,
    ),
}
