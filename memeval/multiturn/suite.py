"""The multi-turn suite: the built-in one generated deterministically from a seed (its sessions:
:mod:`.suite_sessions`; its samples: :mod:`.suite_samples`), saved to and loaded from a folder.

Quote-editing sessions of 2 to 14 turns (fact corrections, a goal change, a form change, a standing
tax constraint, a conflicting request, detours, a confirmed save), recorded against a seeded
:class:`~memeval.multiturn.domain.World`: tool returns keyed ``"turn:call"``, the reference
assistant texts, and hand labels of the state each reply states (for measuring a state extractor).
Plus user x topic units spanning two sessions (cross-session memory).

Files in a suite folder: ``sessions.jsonl``, ``samples.jsonl``, ``fixtures.jsonl``,
``configs.jsonl``, ``state_labels.jsonl``, ``suite.yaml``.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..atomic import write_jsonl, write_text
from ..bench.io import as_int, iter_jsonl, read_yaml
from ..errors import InputError
from .domain import World
from .sample import Sample
from .sample_io import read_samples, write_samples
from .split import split_session
from .suite_samples import cross_session_unit, sample_for_cut, session_sample
from .suite_sessions import config_snapshot, hand_label, paraphrase, plan_session, record_session
from .tools import fixture_to_dict, read_fixtures

__all__ = ["Suite", "generate_suite", "save_suite", "load_suite", "SUITE_FILES"]

SUITE_FILES = ("sessions.jsonl", "samples.jsonl", "fixtures.jsonl", "configs.jsonl", "state_labels.jsonl")


@dataclass(frozen=True)
class Suite:
    seed: int
    sessions: tuple[dict, ...]
    samples: tuple[Sample, ...]
    fixtures: dict
    configs: dict
    labels: tuple[dict, ...]
    world_seed: int

    def world(self) -> World:
        return World.make(self.world_seed)

    def sample(self, sample_id: str) -> Sample:
        return next(s for s in self.samples if s.sample_id == sample_id)


def generate_suite(
    seed: int = 20261018,
    sessions: int = 24,
    cross_session: int = 2,
    grader_version: str = "r5",
    session_units: bool = False,
) -> Suite:
    """``sessions`` task sessions (lengths cycle through the 1-3, 4-8 and 9+ strata) and
    ``cross_session`` user x topic units; with ``session_units`` also a session unit per session
    holding several goals. Same arguments, same suite."""
    rng = random.Random(seed)
    world_seed = rng.randrange(10**9)
    world = World.make(world_seed)
    cfg = config_snapshot(grader_version)
    ranges = [(2, 3), (4, 8), (9, 14)]
    all_sessions, fixtures, samples, labels = [], {}, [], []
    for k in range(sessions):
        lo, hi = ranges[k % 3]
        length = rng.randint(lo, hi)
        srng = random.Random(rng.random())
        sid = f"ss_{seed}_{k:04d}"
        sess, fx, _ = record_session(sid, plan_session(srng, length), world, srng, seed + k)
        all_sessions.append(sess)
        fixtures[fx.fixture_id] = fx
        for cut in split_session(sid, sess["turns"]):
            samples.append(sample_for_cut(sess, cut, fx.fixture_id, cfg["config_id"], grader_version))
        whole = session_sample(sess, fx.fixture_id, cfg["config_id"], grader_version) if session_units else None
        if whole is not None:
            samples.append(whole)
    for k in range(cross_session):
        (s1, f1), (s2, f2), ut = cross_session_unit(k, world, rng, seed, cfg["config_id"], grader_version)
        for s, f in ((s1, f1), (s2, f2)):
            all_sessions.append(s)
            fixtures[f.fixture_id] = f
        for cut in split_session(s1["session_id"], s1["turns"]):
            samples.append(sample_for_cut(s1, cut, f1.fixture_id, cfg["config_id"], grader_version))
        samples.append(ut)
    for s in all_sessions:
        for t in s["turns"]:
            lab = hand_label(t)
            labels.append(
                {
                    "session_id": s["session_id"],
                    "turn": t["index"],
                    "source": "reference",
                    "text": t["assistant_text"],
                    "state": lab,
                }
            )
            if lab and "customer" in lab and (len(labels) % 4 == 0):
                labels.append(
                    {
                        "session_id": s["session_id"],
                        "turn": t["index"],
                        "source": "paraphrase",
                        "text": paraphrase(lab, len(labels) // 4),
                        "state": lab,
                    }
                )
    return Suite(
        seed, tuple(all_sessions), tuple(samples), fixtures, {cfg["config_id"]: cfg}, tuple(labels), world_seed
    )


def save_suite(suite: Suite, folder) -> Path:
    """Write ``suite`` into ``folder`` (its files and ``suite.yaml`` with their hashes; read by :func:`load_suite`)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "sessions.jsonl", suite.sessions)
    write_samples(folder / "samples.jsonl", suite.samples)
    write_jsonl(folder / "fixtures.jsonl", (fixture_to_dict(f) for f in suite.fixtures.values()))
    write_jsonl(folder / "configs.jsonl", suite.configs.values())
    write_jsonl(folder / "state_labels.jsonl", suite.labels)
    hashes = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest()[:16] for n in SUITE_FILES}
    write_text(
        folder / "suite.yaml",
        yaml.safe_dump(
            {
                "kind": "memeval-multiturn-suite",
                "seed": suite.seed,
                "world_seed": suite.world_seed,
                "sessions": len(suite.sessions),
                "samples": len(suite.samples),
                "files": hashes,
            },
            sort_keys=False,
        ),
    )
    return folder


def load_suite(folder) -> Suite:
    """Read a suite folder; every sample's fixture and config must exist."""
    folder = Path(folder)
    man_path = folder / "suite.yaml"
    man = read_yaml(man_path) or {}
    if not isinstance(man, dict):
        raise InputError(man_path, None, None, f"expected a mapping, got {type(man).__name__}")
    seeds = {k: as_int(man, k, man_path, hi=2**63) for k in ("seed", "world_seed")}
    samples = read_samples(folder / "samples.jsonl")
    fixtures = read_fixtures(folder / "fixtures.jsonl")
    configs = {}
    for n, o in iter_jsonl(folder / "configs.jsonl"):
        if not isinstance(o.get("config_id"), str):
            raise InputError(folder / "configs.jsonl", n, "config_id", "missing or not a string")
        configs[o["config_id"]] = o
    sessions = tuple(o for _, o in iter_jsonl(folder / "sessions.jsonl"))
    labels = []
    lpath = folder / "state_labels.jsonl"
    for n, o in iter_jsonl(lpath):
        if not isinstance(o.get("text"), str):
            raise InputError(lpath, n, "text", "missing or not a string")
        if not isinstance(o.get("turn"), int) or isinstance(o.get("turn"), bool):
            raise InputError(lpath, n, "turn", "missing or not an integer")
        if "state" not in o or not (o["state"] is None or isinstance(o["state"], dict)):
            raise InputError(lpath, n, "state", "expected an object or null")
        labels.append(o)
    for n, s in enumerate(samples, 1):
        if s.replay.tool_fixture not in fixtures:
            raise InputError(
                folder / "samples.jsonl", n, "replay.tool_fixture", f"unknown fixture '{s.replay.tool_fixture}'"
            )
        if s.replay.config_snapshot not in configs:
            raise InputError(
                folder / "samples.jsonl", n, "replay.config_snapshot", f"unknown config '{s.replay.config_snapshot}'"
            )
    return Suite(seeds["seed"], sessions, tuple(samples), fixtures, configs, tuple(labels), seeds["world_seed"])
