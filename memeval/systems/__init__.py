"""Memory systems: the protocol, offline baselines, the HTTP adapter and the reference server."""

from ..errors import SystemCallError
from .base import BaseMemorySystem, Capabilities, MemorySystem, Recall, memory_text
from .baselines import BM25, NoMemory, Oracle, Recent
from .registry import BUILTIN, make_system, parse_spec

__all__ = [
    "MemorySystem",
    "BaseMemorySystem",
    "Capabilities",
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
