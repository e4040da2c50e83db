"""SWEEP.yaml: what a sweep runs (systems × benches or presets × seeds × tiers × epochs × modes).

Every problem is one :class:`~memeval.errors.InputError` naming the file and the field, e.g.
``sweep.yaml: field 'seeds': expected a list of whole numbers``; nothing is run before the file is valid.

Example::

    name: demo-3x2            # names the sweep folder (default: the file's stem)
    systems: [no_memory, bm25, oracle]
    presets: [demo]           # generated lifelog benches, one per seed, into data_root
    seeds: [1, 2]
    benches: []               # bench folders, taken as they are (seeds do not apply)
    tiers: null               # null: every tier of each bench
    epochs: 1
    modes: [dry]
    question_set: main
    data_root: data
    judge: {url: http://127.0.0.1:8000/v1, model: m, key_env: OPENAI_API_KEY}   # memory/answer modes
    reader: {url: http://127.0.0.1:8000/v1, model: m, key_env: OPENAI_API_KEY}  # answer mode
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...bench.files import read_yaml
from ...bench.lifelog import PRESETS
from ...errors import InputError, MemevalError
from ...systems.base import declared
from ...text.urls import public_url
from ...systems.registry import make_system

__all__ = ["SweepSpec", "ModelRef", "load_spec", "check_spec", "FIELDS"]

FIELDS = (
    "name",
    "systems",
    "presets",
    "seeds",
    "benches",
    "tiers",
    "epochs",
    "modes",
    "question_set",
    "data_root",
    "judge",
    "reader",
)
MODES = ("dry", "memory", "answer")
_NO_CREDENTIALS = (
    "credentials in a URL would be written into sweep.json and shard names: give the token in the "
    "workers' environment instead (MEMEVAL_API_KEY for HTTP systems, key_env for judge and reader)"
)


@dataclass(frozen=True)
class ModelRef:
    """An OpenAI-compatible model a worker calls (judge or reader); the key stays in the environment."""

    url: str
    model: str
    key_env: str = "OPENAI_API_KEY"


@dataclass(frozen=True)
class SweepSpec:
    path: str
    name: str
    systems: tuple[str, ...]
    presets: tuple[str, ...] = ()
    seeds: tuple[int, ...] = (1,)
    benches: tuple[str, ...] = ()
    tiers: tuple[str, ...] | None = None
    epochs: int = 1
    modes: tuple[str, ...] = ("dry",)
    question_set: str = "main"
    data_root: str = "data"
    judge: ModelRef | None = None
    reader: ModelRef | None = None

    def public(self) -> dict:
        """The spec as the sweep manifest records it (model references name the key's variable only)."""
        out = {k: getattr(self, k) for k in FIELDS}
        for role in ("judge", "reader"):
            ref = out[role]
            out[role] = None if ref is None else {"url": ref.url, "model": ref.model, "key_env": ref.key_env}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}


def _strings(obj: dict, key: str, path, required: bool = False) -> tuple[str, ...]:
    v = obj.get(key)
    if v is None:
        if required:
            raise InputError(path, None, key, "missing (a list of names)")
        return ()
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise InputError(path, None, key, "expected a list of non-empty strings")
    if len(set(v)) != len(v):
        raise InputError(path, None, key, "lists a value twice")
    return tuple(v)


def _model(obj: dict, role: str, path) -> ModelRef | None:
    v = obj.get(role)
    if v is None:
        return None
    if not isinstance(v, dict):
        raise InputError(path, None, role, "expected a mapping with url, model and key_env")
    extra = set(v) - {"url", "model", "key_env"}
    if extra:
        raise InputError(path, None, f"{role}.{sorted(extra)[0]}", "unknown field (url, model, key_env)")
    for k in ("url", "model"):
        if not isinstance(v.get(k), str) or not v[k].strip():
            raise InputError(path, None, f"{role}.{k}", "missing (a non-empty string)")
    if public_url(v["url"]) != v["url"]:
        raise InputError(path, None, f"{role}.url", _NO_CREDENTIALS)
    key_env = v.get("key_env", "OPENAI_API_KEY")
    if not isinstance(key_env, str) or not key_env.isidentifier():
        raise InputError(path, None, f"{role}.key_env", "expected the name of an environment variable")
    return ModelRef(v["url"], v["model"], key_env)


def load_spec(path) -> SweepSpec:
    """Read and check a SWEEP.yaml (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, None, "no sweep file here")
    return check_spec(read_yaml(path), path, path.stem)


def check_spec(obj, path, default_name: str = "sweep") -> SweepSpec:
    """A sweep spec from its parsed fields (``path`` names where they came from in every error)."""
    if not isinstance(obj, dict):
        raise InputError(path, None, None, "expected a mapping of sweep fields")
    unknown = [k for k in obj if k not in FIELDS]
    if unknown:
        raise InputError(path, None, str(unknown[0]), f"unknown field (known: {', '.join(FIELDS)})")
    name = obj.get("name", default_name)
    if not isinstance(name, str) or not name.strip() or "/" in name or name.startswith("."):
        raise InputError(path, None, "name", "expected a plain folder name")
    systems = _strings(obj, "systems", path, required=True)
    if not systems:
        raise InputError(path, None, "systems", "empty: name at least one system")
    for i, s in enumerate(systems):
        if public_url(s) != s:
            raise InputError(path, None, f"systems[{i}]", _NO_CREDENTIALS)
        try:
            sut = make_system(s)
        except MemevalError as e:
            raise InputError(path, None, f"systems[{i}]", str(e)) from None
        declared(sut).close()
    presets = _strings(obj, "presets", path)
    for i, p in enumerate(presets):
        if p not in PRESETS:
            raise InputError(path, None, f"presets[{i}]", f"unknown preset {p!r} (choose from {', '.join(PRESETS)})")
    benches = _strings(obj, "benches", path)
    if not presets and not benches:
        raise InputError(path, None, "benches", "no benches: give bench folders, presets, or both")
    seeds = obj.get("seeds", [1])
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if (
        not isinstance(seeds, list)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**31 for s in seeds)
        or len(set(seeds)) != len(seeds)
    ):
        raise InputError(path, None, "seeds", "expected a non-empty list of distinct whole numbers (0..2^31)")
    tiers = obj.get("tiers")
    tiers = None if tiers is None else _strings(obj, "tiers", path) or None
    epochs = obj.get("epochs", 1)
    if not isinstance(epochs, int) or isinstance(epochs, bool) or not 1 <= epochs <= 1000:
        raise InputError(path, None, "epochs", "expected a whole number from 1 to 1000")
    modes = _strings(obj, "modes", path) or ("dry",)
    for i, m in enumerate(modes):
        if m not in MODES:
            raise InputError(path, None, f"modes[{i}]", f"unknown mode {m!r} (choose from {', '.join(MODES)})")
    qs = obj.get("question_set", "main")
    if not isinstance(qs, str) or not qs.strip():
        raise InputError(path, None, "question_set", "expected a question set name (e.g. main, probes)")
    data_root = obj.get("data_root", "data")
    if not isinstance(data_root, str) or not data_root.strip():
        raise InputError(path, None, "data_root", "expected a folder path")
    judge, reader = _model(obj, "judge", path), _model(obj, "reader", path)
    if any(m != "dry" for m in modes) and judge is None:
        raise InputError(path, None, "judge", "modes memory and answer need a judge (url, model, key_env)")
    if "answer" in modes and reader is None:
        raise InputError(path, None, "reader", "mode answer needs a reader (url, model, key_env)")
    return SweepSpec(
        str(path), name, systems, presets, tuple(seeds), benches, tiers, epochs, modes, qs, data_root, judge, reader
    )
