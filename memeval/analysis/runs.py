"""Run folders as a collection: find them, describe each from its manifest, find the floor and ceiling
runs beside a run (same bench content hash, mode and question set), and a headline per run.

Used by ``memeval summary`` (automatic floor/ceiling), ``memeval run`` (the closing headline) and
``memeval view`` (the run browser).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import polars as pl
import yaml

from ..errors import InputError
from ..run.records import read_records
from ..run.folder import read_manifest
from ..run.sweep.plan import is_sweep
from ..run.status import errors_by_reason, reasons_line
from .aggregate import CEILING, FLOOR

__all__ = [
    "RunInfo",
    "run_info",
    "role_of",
    "short_hash",
    "bench_variant",
    "find_runs",
    "run_sources",
    "sibling_bounds",
    "headline_table",
    "headline_lines",
    "attribution_line",
]


@dataclass(frozen=True)
class RunInfo:
    """What a run's manifest says about it, flattened for tables and the browser index."""

    path: Path
    run_id: str
    system: str
    label: str
    bench: str
    content_hash: str
    mode: str
    question_set: str
    status: str
    created_at: str
    #: ``system``, or a bound shown beside systems and never ranked: ``ceiling`` (the built-in oracle,
    #: marked so in its manifest) or ``floor`` (``no_memory``)
    role: str = "system"
    bench_root: str = ""  # the bench folder the run read (manifest), "" if not recorded
    preset: str | None = None  # the generator's preset and seed (the bench folder's ``bench.yaml``)
    seed: str | None = None
    sweep: Path | None = None  # the sweep folder a shard belongs to
    tiers: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        """Runs with the same key were made on the same bench files, mode and question set."""
        return self.content_hash, self.mode, self.question_set

    @property
    def is_bound(self) -> bool:
        """A floor or ceiling run: shown beside systems as a bound, never listed or ranked as one."""
        return self.role != "system"

    @property
    def bench_id(self) -> str:
        """The bench told apart from its siblings: name, version, preset/seed (or the bench folder's
        name) and a short content hash.

        >>> run_info(tiny_run).bench_id
        'lifelog 1.2.0 · tiny s1 · ...'
        """
        variant = (
            f"{self.preset} s{self.seed}"
            if self.preset is not None
            else (Path(self.bench_root).name if self.bench_root else "")
        )
        return " · ".join(x for x in (self.bench, variant, short_hash(self.content_hash)) if x)


def short_hash(content_hash: str) -> str:
    """The first 8 hex digits of a bench content hash (``sha256:`` prefix dropped).

    >>> short_hash("sha256:0123456789abcdef")
    '01234567'
    """
    return content_hash.split(":", 1)[-1][:8]


def role_of(system_config: dict) -> str:
    """``ceiling``, ``floor`` or ``system``: what the manifest's ``config.system`` marks (``role``, set by
    the runner for the oracle), else the built-in bound names (runs written before the mark).

    >>> role_of({"spec": "oracle"}), role_of({"spec": "no_memory"}), role_of({"spec": "bm25", "role": "ceiling"})
    ('ceiling', 'floor', 'ceiling')
    """
    role = system_config.get("role")
    if role in ("ceiling", "floor"):
        return str(role)
    spec = str(system_config.get("spec"))
    return "ceiling" if spec == CEILING else "floor" if spec == FLOOR else "system"


@functools.lru_cache(maxsize=64)
def _generator(root: str, _mtime: int) -> tuple[str | None, str | None]:
    try:
        with open(Path(root) / "bench.yaml", encoding="utf-8") as fh:
            meta = yaml.safe_load(fh)
        gen = meta.get("generator") if isinstance(meta, dict) else None
    except (OSError, yaml.YAMLError):
        return None, None
    if not isinstance(gen, dict) or gen.get("preset") is None:
        return None, None
    return str(gen["preset"]), None if gen.get("seed") is None else str(gen["seed"])


def bench_variant(root: str) -> tuple[str | None, str | None]:
    """The generator preset and seed of the bench at ``root`` (None, None: not generated, or not found)."""
    try:
        mtime = (Path(root) / "bench.yaml").stat().st_mtime_ns
    except OSError:
        return None, None
    return _generator(str(root), mtime)


def run_info(run_dir: str | Path) -> RunInfo:
    """What ``run_dir``'s manifest says about its run (and its bench folder about the bench's preset/seed)."""
    m = read_manifest(run_dir)
    c = m["config"]
    b = c.get("bench") or {}
    spec = str(c["system"].get("spec"))
    root = str(b.get("root") or "")
    preset, seed = bench_variant(root) if root else (None, None)
    parent = Path(run_dir).parent
    return RunInfo(
        Path(run_dir),
        str(m.get("run_id", Path(run_dir).name)),
        spec,
        str(c["system"].get("label") or spec),
        f"{b.get('name')} {b.get('version')}",
        str(b.get("content_hash") or ""),
        str(c.get("mode")),
        str(c.get("question_set") or "main"),
        str(m.get("status")),
        str(m.get("created_at") or ""),
        role=role_of(c["system"]),
        bench_root=root,
        preset=preset,
        seed=seed,
        sweep=parent if is_sweep(parent) else None,
        tiers=tuple(str(t.get("name")) for t in c.get("tiers") or [] if isinstance(t, dict)),
    )


def _run_folders(root: Path) -> list[Path]:
    """Run folders at or anywhere under ``root`` (:func:`run_sources`, each sweep's shards in its place)."""
    out: list[Path] = []
    for src in run_sources(root):
        if (src / "manifest.json").is_file():
            out.append(src)
        else:  # a sweep: the shard folders directly inside it
            out.extend(
                sorted(
                    d for d in src.iterdir() if d.is_dir() and not d.is_symlink() and (d / "manifest.json").is_file()
                )
            )
    return out


def find_runs(root: str | Path, unreadable: list[str] | None = None) -> list[RunInfo]:
    """Every run folder (holding ``manifest.json``) that is ``root`` itself or anywhere under it (sweep
    shards included; symlinked folders not followed), newest first. A folder whose manifest cannot be
    read is left out; with ``unreadable``, one line per such folder (its path and the reason) is
    appended to it."""
    out = []
    for man in (d / "manifest.json" for d in _run_folders(Path(root))):
        try:
            out.append(run_info(man.parent))
        except (InputError, KeyError, TypeError, AttributeError) as e:
            if unreadable is not None:
                reason = " ".join(str(e).splitlines()) if isinstance(e, InputError) else f"{type(e).__name__}: {e}"
                unreadable.append(f"{man.parent}: unreadable manifest ({reason})")
    return sorted(out, key=lambda r: r.created_at, reverse=True)


def run_sources(root: str | Path) -> list[Path]:
    """The run folders (holding ``manifest.json``) and sweep folders at or anywhere under ``root``, in
    path order; neither is searched further (a sweep stands for its shards), nor are symlinked folders.

    >>> run_sources(tiny_run.parent.parent) == [tiny_run]   # the project: data/ holds no run
    True
    """
    root = Path(root)
    if (root / "manifest.json").is_file() or is_sweep(root):
        return [root]
    if not root.is_dir():
        return []
    out: list[Path] = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        out.extend(run_sources(sub))
    return out


def sibling_bounds(run_dirs: Iterable[str | Path], candidates: Iterable[RunInfo] | None = None) -> list[Path]:
    """The finished floor (``no_memory``) and ceiling (``oracle``) runs in the same parent folders as
    ``run_dirs``, made on the same bench files with the same mode and question set, that are not
    already among ``run_dirs`` (the newest of each, per key). ``candidates``: the runs already found
    (``find_runs``, newest first), instead of searching the parent folders again."""
    run_dirs = list(run_dirs)
    given = [run_info(d) for d in run_dirs]
    have = {(r.key, r.system) for r in given}
    out: dict[tuple, Path] = {}
    parents = list(dict.fromkeys(Path(d).resolve().parent for d in run_dirs))
    if candidates is None:
        found = [r for parent in parents for r in find_runs(parent)]
    else:
        found = [r for r in candidates if r.path.resolve().parent in parents]
    for r in sorted(found, key=lambda r: r.created_at, reverse=True):
        want = (r.key, r.system)
        if (
            r.is_bound
            and any(r.key == g.key for g in given)
            and want not in have
            and want not in out
            and r.status == "complete"
        ):
            out[want] = r.path
    return list(out.values())


def headline_table(df: pl.DataFrame) -> pl.DataFrame:
    """Per system × tier: weighted and unweighted mean over graded records, n, graded, errors and
    retries (extra HTTP attempts)."""
    graded = pl.col("score").is_not_null()
    retries = (pl.col("attempts").fill_null(1) - 1).clip(lower_bound=0).sum() if "attempts" in df.columns else pl.lit(0)
    return (
        df.group_by("system", "tier_index", "tier")
        .agg(
            pl.when(graded.any())
            .then((pl.col("score") * pl.col("weight")).sum() / pl.col("weight").filter(graded).sum())
            .alias("weighted"),
            pl.col("score").mean().alias("unweighted"),
            pl.len().alias("n"),
            graded.sum().alias("graded"),
            pl.col("error").is_not_null().sum().alias("errors"),
            retries.alias("retries"),
        )
        .sort("system", "tier_index")
    )


#: the record fields a headline reads, with their types
_HEADLINE_SCHEMA = {
    "system": pl.Utf8,
    "tier": pl.Utf8,
    "qid": pl.Utf8,
    "epoch": pl.Int64,
    "score": pl.Float64,
    "weight": pl.Int32,
    "error": pl.Utf8,
    "attempts": pl.Int64,
    "images_sent": pl.Int64,
}


def _headline_records(run_dir: str | Path) -> pl.DataFrame:
    """The headline's fields of every record: read by polars (a tenth of the time of the full check,
    for a file this run just wrote whole), else, for a torn tail, any value polars cannot read as
    typed, a score outside [0, 1] (NaN included) or a repeated (tier, question, epoch), by
    :func:`read_records`, which names the line and field of bad input."""
    path = Path(run_dir) / "records.jsonl"
    if not path.is_file() or path.stat().st_size == 0:
        return pl.DataFrame(schema=_HEADLINE_SCHEMA)
    with open(path, "rb") as fh:
        fh.seek(-1, 2)
        whole = fh.read(1) == b"\n"
    if whole:
        try:
            df = pl.read_ndjson(path, schema=_HEADLINE_SCHEMA)
            bad = df.select(
                (~pl.col("score").is_between(0, 1) & pl.col("score").is_not_null()).any()
                | pl.struct("tier", "qid", "epoch").is_duplicated().any()
                | pl.col("tier").is_null().any()
            ).item()
            if not bad:
                return df
        except (pl.exceptions.PolarsError, ValueError, OSError):
            pass  # the checked reader below says what is wrong
    rows = [{k: r.get(k) for k in _HEADLINE_SCHEMA} for r in read_records(run_dir)]
    return pl.DataFrame(rows, schema=_HEADLINE_SCHEMA)


def _write_path_lines(manifest: dict) -> list[str]:
    """The headline's causal-guard line (only when a memory dated after its question came back) and,
    for a system that indexes asynchronously, its time to searchable (run.writepath)."""
    lines = []
    causal = manifest.get("causal")
    if isinstance(causal, dict) and causal.get("questions_flagged"):
        lines.append(
            f"  causal guard: {causal['questions_flagged']} of {causal.get('checked')} dated questions retrieved "
            f"a memory dated after the question ({causal.get('memories_flagged')} memories): a leak from the future"
        )
    wp = manifest.get("write_path")
    wp = wp if isinstance(wp, dict) else {}
    hays = wp.get("haystacks") if wp.get("indexing") == "async" else None
    if isinstance(hays, dict) and hays:
        ms = sorted(h["searchable_ms"] for h in hays.values() if isinstance(h.get("searchable_ms"), (int, float)))
        never = sum(1 for h in hays.values() if h.get("searchable_ms") is None and h.get("probes"))
        shown = f"median {ms[len(ms) // 2]:,.0f} ms, max {ms[-1]:,.0f} ms over {len(ms)} haystacks" if ms else "none"
        lines.append(
            f"  time to searchable: {shown}"
            + (f"; {never} never searchable within {wp.get('searchable_timeout_s')}s" if never else "")
        )
    return lines


def attribution_line(summary) -> str | None:
    """The headline's line of ``memeval attribute``'s manifest summary: where the misses broke.

    >>> attribution_line({"misses": 4, "attributed_misses": 4, "counts": {"write_loss": 1, "reader_loss": 3}})
    '  where it broke: 4 of 4 misses attributed: write loss 1, reader loss 3'
    """
    if not isinstance(summary, dict) or "misses" not in summary:
        return None
    counts = summary.get("counts") or {}
    parts = [f"{k.replace('_', ' ')} {v}" for k, v in counts.items() if k != "correct" and v]
    return f"  where it broke: {summary.get('attributed_misses', 0)} of {summary['misses']} misses attributed" + (
        ": " + ", ".join(parts) if parts else ""
    )


def headline_lines(run_dir: str | Path) -> list[str]:
    """A run's headline in a few lines: per tier weighted/unweighted score with n, errors and retries.

    Retries come from the records' ``attempts`` (absent for in-process systems: 0).

    >>> print(headline_lines(tiny_run)[1])
      core       weighted 0.645  unweighted 0.767  n=63 graded=58 errors=0 retries=0
    """
    df = _headline_records(run_dir)
    info = run_info(run_dir)
    if not df.height:
        return [f"{info.label}: no records yet"]
    order = {t: i for i, t in enumerate(df["tier"].unique(maintain_order=True))}
    df = df.with_columns(pl.col("tier").replace_strict(order, return_dtype=pl.Int32).alias("tier_index"))
    lines = [f"{info.label} on {info.bench}, mode {info.mode}, question set {info.question_set}, status {info.status}"]
    errs = df.filter(pl.col("error").is_not_null())
    for r in headline_table(df).iter_rows(named=True):
        w = "-" if r["weighted"] is None or r["weighted"] != r["weighted"] else f"{r['weighted']:.3f}"  # nan: -
        u = "-" if r["unweighted"] is None or r["unweighted"] != r["unweighted"] else f"{r['unweighted']:.3f}"
        lines.append(
            f"  {r['tier']:<10} weighted {w}  unweighted {u}  n={r['n']} graded={r['graded']} "
            f"errors={r['errors']} retries={r['retries']}"
        )
    if errs.height:
        lines.append(f"  errors by reason: {reasons_line(errors_by_reason(errs.iter_rows(named=True)))}")
    manifest = read_manifest(run_dir)
    grading = manifest.get("grading")
    if isinstance(grading, dict) and grading.get("asked"):  # a judge-graded run: how much it could grade
        lines.append(
            f"  judge: graded {grading['graded']} of {grading['asked']} ({grading['graded_share']:.0%}); "
            f"unparseable replies {grading['unparseable']} ({grading['unparseable_share']:.0%}), "
            f"failed calls {grading['call_failures']}"
        )
    lines += _write_path_lines(manifest)
    line = attribution_line(manifest.get("attribution"))
    if line:
        lines.append(line)
    with_images = df["images_sent"].drop_nulls()
    unseen = int((with_images == 0).sum())
    if unseen:  # answer mode: say plainly where the reader answered without the images
        lines.append(
            f"  images: the reader saw none of the images for {unseen} of {with_images.len()} questions whose "
            "memories carried images (reader not marked as accepting images, or unreadable; see images_note)"
        )
    return lines
