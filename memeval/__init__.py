"""memeval: a workbench for measuring long-term memory in LLM systems."""

__version__ = "0.1.0"
__all__ = ["__version__"]
