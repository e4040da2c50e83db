"""The generator's templates and vocabularies, read from ``data/*.yaml`` (the project's own text)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

__all__ = ["load", "language", "LANGUAGES"]

#: The ten story languages besides English, in the order sessions and questions are made.
LANGUAGES: tuple[str, ...] = ("es", "fr", "de", "pt", "it", "zh", "ja", "ko", "ru", "ar")


@lru_cache(maxsize=None)
def load(name: str) -> Any:
    """``data/<name>.yaml`` parsed (cached; treat as read-only)."""
    text = resources.files(__package__).joinpath("data", f"{name}.yaml").read_text(encoding="utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml's parser where installed


def language(code: str) -> Any:
    return load(f"lang/{code}")
