"""Subcommands of the memeval CLI, one module each (see memeval.cli)."""
