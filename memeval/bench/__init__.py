"""Bench data model, files and manifest."""

from .axes import AXES, AXIS_WEIGHTS
from .io import load_bench, read_questions, read_turns, save_bench, write_questions, write_turns
from .model import Bench, Question, Session, Tier, Turn, haystacks_of, sessions_of

__all__ = [
    "AXES",
    "AXIS_WEIGHTS",
    "Bench",
    "Question",
    "Session",
    "Tier",
    "Turn",
    "haystacks_of",
    "sessions_of",
    "load_bench",
    "read_questions",
    "read_turns",
    "save_bench",
    "write_questions",
    "write_turns",
]
