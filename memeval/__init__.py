"""memeval: a workbench for measuring long-term memory in LLM systems."""

from ._version import __version__

__all__ = ["__version__"]
