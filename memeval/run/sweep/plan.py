"""A sweep's shards and its folder: ``SWEEP_DIR/sweep.json`` (the sweep manifest) lists every
(system, bench, tier, mode) shard and the run folder ``SWEEP_DIR/<shard id>/`` it writes, an ordinary
run folder (manifest + records) that ``memeval run`` could have written."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..._version import __version__
from ...atomic import write_text
from ...bench.files import read_json
from ...bench.io import load_bench
from ...errors import InputError
from ...text.names import slug
from ...workspace import anchored
from .spec import SweepSpec

__all__ = ["Shard", "BenchRef", "resolve_benches", "plan_shards", "write_sweep", "read_sweep", "is_sweep", "SWEEP"]

SWEEP = "sweep.json"


@dataclass(frozen=True)
class BenchRef:
    """A bench of the sweep: its folder (absolute), label (names the shards), preset and seed if generated."""

    dir: str
    label: str
    tiers: tuple[str, ...]
    preset: str | None = None
    seed: int | None = None
    #: the tiers that have the sweep's question set (None: every tier; the set is ``main``)
    asked: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Shard:
    """One task: one system over one tier of one bench in one mode; everything a worker needs is here
    (paths are absolute: a worker on a shared filesystem needs nothing else)."""

    id: str
    run_dir: str
    bench_dir: str
    bench: str
    preset: str | None
    seed: int | None
    system: str
    mode: str
    tier: str
    tier_index: int
    epochs: int
    question_set: str


def _label(text: str) -> str:
    return slug(text).strip("_")[:48] or "x"


def resolve_benches(spec: SweepSpec, generate_missing: bool = True) -> list[BenchRef]:
    """The sweep's bench folders: each preset × seed generated into ``data_root`` on first use (as the
    notebooks do), then each bench folder as given; tiers and the question set checked against every
    bench, before any shard runs (a tier named in ``tiers`` must have the question set; without
    ``tiers``, the tiers that have it are run, as ``memeval run`` does, and a bench with none is refused)."""
    refs: list[BenchRef] = []
    root = anchored(spec.data_root)
    for preset in spec.presets:
        for seed in spec.seeds:
            d = root / f"lifelog-{preset}-s{seed}"
            if not (d / "bench.yaml").is_file() and generate_missing:
                from ...bench.lifelog import generate  # on use: only a missing bench

                generate(preset, seed, d)
            refs.append(BenchRef(str(d.resolve()), d.name, (), preset, seed))
    for i, b in enumerate(spec.benches):
        d = anchored(b)
        if not (d / "bench.yaml").is_file():
            raise InputError(spec.path, None, f"benches[{i}]", f"{b}: no bench.yaml in this folder")
        refs.append(BenchRef(str(d.resolve()), _label(d.resolve().name), ()))
    out = []
    for r in refs:
        bench = load_bench(r.dir)
        tiers = bench.tier_names
        missing = [t for t in spec.tiers or () if t not in tiers]
        if missing:
            raise InputError(
                spec.path, None, "tiers", f"bench {r.label} has no tier {missing[0]!r} ({', '.join(tiers)})"
            )
        asked = None
        qs = spec.question_set
        if qs != "main":
            asked = tuple(t.name for t in bench.tiers if qs in t.question_sets)
            lacking = [t for t in spec.tiers or () if t not in asked]
            if lacking:
                raise InputError(
                    spec.path,
                    None,
                    "question_set",
                    f"tier {lacking[0]!r} of bench {r.label} has no question set {qs!r}",
                )
            if not asked:
                raise InputError(spec.path, None, "question_set", f"no tier of bench {r.label} has question set {qs!r}")
        out.append(BenchRef(r.dir, r.label, tuple(tiers), r.preset, r.seed, asked))
    labels = [r.label for r in out]
    dup = next((x for x in labels if labels.count(x) > 1), None)
    if dup:
        raise InputError(spec.path, None, "benches", f"two benches are named {dup!r}: their shards would collide")
    return out


def plan_shards(spec: SweepSpec, benches: list[BenchRef], sweep_dir) -> list[Shard]:
    """Every (bench, system, mode, tier) shard, in order; epochs run inside each shard."""
    sweep_dir = Path(sweep_dir).resolve()
    shards = []
    for b in benches:
        tiers = [t for t in b.tiers if (spec.tiers is None or t in spec.tiers) and (b.asked is None or t in b.asked)]
        for system in spec.systems:
            for mode in spec.modes:
                label = mode if spec.question_set == "main" else f"{mode}-{_label(spec.question_set)}"
                for tier in tiers:
                    sid = f"{b.label}_{_label(system)}_{label}_{_label(tier)}"
                    shards.append(
                        Shard(
                            sid,
                            str(sweep_dir / sid),
                            b.dir,
                            b.label,
                            b.preset,
                            b.seed,
                            system,
                            mode,
                            tier,
                            b.tiers.index(tier),
                            spec.epochs,
                            spec.question_set,
                        )
                    )
    ids = [s.id for s in shards]
    dup = next((x for x in ids if ids.count(x) > 1), None)
    if dup:
        raise InputError(spec.path, None, "systems", f"two shards would share the folder {dup!r}: rename a system")
    return shards


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def write_sweep(sweep_dir, spec: SweepSpec, shards: list[Shard], outcome: dict | None = None, **extra) -> Path:
    """Write (atomically) the sweep manifest; ``outcome``: shard id → its status and record count."""
    sweep_dir = Path(sweep_dir)
    rows = []
    for s in shards:
        row = asdict(s) | {"run_dir": Path(s.run_dir).name}  # relative: the folder moves as a whole
        if outcome and s.id in outcome:
            row.update(outcome[s.id])
        rows.append(row)
    doc = {"sweep": spec.name, "spec": spec.public(), "memeval_version": __version__, "written_at": _now()}
    doc.update(extra)
    doc["shards"] = rows
    write_text(sweep_dir / SWEEP, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return sweep_dir / SWEEP


def is_sweep(path) -> bool:
    return (Path(path) / SWEEP).is_file()


def read_sweep(sweep_dir) -> dict:
    """The sweep manifest, each shard's ``run_dir`` made a path under ``sweep_dir`` (never outside it)."""
    sweep_dir = Path(sweep_dir)
    path = sweep_dir / SWEEP
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("shards"), list):
        raise InputError(path, None, "shards", "not a sweep manifest (expected a list of shards)")
    for i, row in enumerate(doc["shards"]):
        rd = row.get("run_dir") if isinstance(row, dict) else None
        if not isinstance(rd, str) or not rd or "/" in rd or "\\" in rd or rd in (".", ".."):
            raise InputError(path, f"shards[{i}]", "run_dir", "expected a folder name inside the sweep folder")
        row["run_dir"] = sweep_dir / rd
    return doc
