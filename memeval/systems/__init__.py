"""Memory systems: the protocol, offline baselines, the HTTP adapter and the reference server."""

from .base import MemorySystem, Recall, SystemCallError, memory_text
from .baselines import BM25, NoMemory, Oracle, Recent
from .registry import BUILTIN, make_system, parse_spec

__all__ = [
    "MemorySystem",
    "Recall",
    "SystemCallError",
    "memory_text",
    "BM25",
    "NoMemory",
    "Oracle",
    "Recent",
    "BUILTIN",
    "make_system",
    "parse_spec",
]
