"""What a notebook's first cells do: find or generate the bench, run (or resume) the systems, load records.

Kept here so notebooks stay thin and so the same steps are tested outside a kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import polars as pl
from .errors import InputError, ArgumentError
from .run import run_system
from .systems.registry import make_system
from .analysis.aggregate import load_records
from .analysis.runs import run_sources
from .analysis.sweeps import is_sweep, load_sweep, sweep_run_dirs
from .run.folder import read_manifest
from .bench.files import read_yaml
from .run.sweep import check_spec, run_sweep

from .workspace import anchored, project_root  # re-exported: the notebooks import them here

__all__ = [
    "ensure_bench",
    "run_systems",
    "run_served",
    "label_systems",
    "load_runs",
    "bench_of_run",
    "project_root",
    "anchored",
    "parse_run_labels",
    "run_folders",
    "sweep_systems",
]


def parse_run_labels(run_dirs: Iterable[str | Path]) -> tuple[list[Path], dict[str, Path]]:
    """Split ``NAME=RUN_DIR`` items into folders and ``{label: folder}`` (plain folders get no label).

    >>> parse_run_labels(["padded=runs/a", "runs/b"])
    ([PosixPath('runs/a'), PosixPath('runs/b')], {'padded': PosixPath('runs/a')})
    """
    dirs: list[Path] = []
    labels: dict[str, Path] = {}
    for item in run_dirs:
        text = str(item)
        name, sep, folder = text.partition("=")
        if sep and name and "/" not in name and not Path(text).exists():
            if name in labels:
                raise ArgumentError(f"label {name!r} given twice")
            labels[name] = Path(folder)
            dirs.append(Path(folder))
        else:
            dirs.append(Path(text))
    return dirs, labels


def ensure_bench(
    bench_dir: str | Path | None = None, preset: str = "demo", seed: int = 1, data_root: str | Path = "data"
) -> Path:
    """``bench_dir`` if given (it must hold ``bench.yaml``); else the generated lifelog bench
    ``data/lifelog-<preset>-s<seed>`` under the project root, generated on first use."""
    if bench_dir is not None:
        path = anchored(bench_dir)
        if not (path / "bench.yaml").is_file():
            raise InputError(path / "bench.yaml", message="no bench manifest here")
        return path
    path = anchored(data_root) / f"lifelog-{preset}-s{seed}"
    if not (path / "bench.yaml").is_file():
        from .bench.lifelog import generate  # on use: a kernel whose bench exists skips it

        generate(preset, seed, path)
    return path


def run_systems(
    bench_dir: str | Path,
    systems: Iterable[str],
    tiers: Iterable[str] | None = None,
    mode: str = "dry",
    runs_root: str | Path = "runs",
    epochs: int = 1,
) -> list[Path]:
    """Run each system over the bench (resuming a finished or partial run of the same config)."""
    return [
        run_system(
            bench_dir,
            s,
            tiers=list(tiers) if tiers else None,
            mode=mode,
            epochs=epochs,
            runs_root=anchored(runs_root),
            progress=False,
        )
        for s in systems
    ]


def run_served(
    bench_dir: str | Path,
    systems: Iterable[str],
    tiers: Iterable[str] | None = None,
    mode: str = "dry",
    runs_root: str | Path = "runs",
    delay_ms: float = 0.0,
) -> dict[str, Path]:
    """Serve each built-in system with the reference server on loopback and run it over HTTP, so
    its speed is *measured* (latency minus the network floor) rather than taken in process.

    Returns ``{"<spec> over HTTP": run folder}``; the folder is named after that label, never the
    server's (random) port, so a second report resumes it. Records name the system by its URL, which
    :func:`label_systems` maps back to these labels.
    """
    from .systems.server import Faults, ReferenceServer  # on use: starlette, uvicorn

    out: dict[str, Path] = {}
    for spec in systems:
        with ReferenceServer(make_system(spec), faults=Faults(delay_ms=delay_ms)) as srv:
            label = f"{spec} over HTTP"
            out[label] = run_system(
                bench_dir,
                srv.url,
                tiers=list(tiers) if tiers else None,
                mode=mode,
                runs_root=anchored(runs_root),
                progress=False,
                name=f"{spec}-http",
            )
    return out


def label_systems(df: pl.DataFrame, labels: dict[str, Path]) -> pl.DataFrame:
    """Rename the ``system`` of the records of each run folder in ``labels`` (label → folder)."""
    by_run = {Path(d).name: label for label, d in labels.items()}
    return df.with_columns(pl.col("run_id").replace_strict(by_run, default=pl.col("system")).alias("system"))


def load_runs(run_dirs: str | Path | Iterable[str | Path]) -> pl.DataFrame:
    """All records of the given run folders (see ``aggregate.load_records``), or of every run under a
    folder of runs (``load_runs("runs")``, searched at any depth, as inspect's ``evals_df("logs")``). An
    item may be ``NAME=RUN_DIR``: that run's records are shown as system ``NAME`` (two runs of one
    system side by side). Relative folders are found from the current folder, else the project root. A
    sweep folder (``memeval sweep``) stands for its shards' runs, with ``bench``, ``preset`` and
    ``seed`` columns (``analysis.sweeps.load_sweep``).

    ``tier`` is a polars ``Enum`` in the benches' tier order (from the run manifests), so sorting and
    grouping follow core < small < medium < full; ``df.to_pandas()`` makes it an ordered ``Categorical``.

    >>> df = load_runs([tiny_run])
    >>> df.height, df["system"].unique().to_list()
    (309, ['bm25'])
    >>> load_runs(tiny_run.parent).height          # a folder of runs
    309
    >>> load_runs([f"top10={tiny_run}"])["system"].unique().to_list()
    ['top10']
    >>> df["tier"].dtype
    Enum(categories=['core', 'small', 'medium', 'full'])
    >>> df.to_pandas()["tier"].cat.ordered
    True
    """
    dirs, labels = parse_run_labels([run_dirs] if isinstance(run_dirs, (str, Path)) else run_dirs)
    if not dirs:
        raise ArgumentError("no run folders given")
    found = _expand([anchored(d) for d in dirs])
    plain = [d for d in found if not is_sweep(d)]
    frames = ([load_records(plain)] if plain else []) + [load_sweep(d) for d in found if is_sweep(d)]
    # the benches' own tier lists first (a run of some tiers only does not show where the others go)
    orders = [*_bench_orders(plain), *(o for f in frames for o in _tier_orders(f))]
    df = frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")
    df = df.with_columns(
        pl.col("tier").cast(pl.Enum(_merge_orders([*orders, sorted(df["tier"].drop_nulls().unique())])))
    )
    if labels:
        df = label_systems(df, {k: anchored(v) for k, v in labels.items()})
    return df


def _expand(found: list[Path]) -> list[Path]:
    """Each folder as itself if it is a run or a sweep, else the runs and sweeps under it (none: an error)."""
    out: list[Path] = []
    for d in found:
        if not d.exists():
            raise ArgumentError(f"{d}: no such run folder")
        sources = run_sources(d)
        if not sources:
            raise ArgumentError(f"{d}: no runs here (no manifest.json or sweep manifest at any depth)")
        out.extend(sources)
    return list(dict.fromkeys(out))


def _bench_orders(run_dirs: list[Path]) -> list[list[str]]:
    """The tier names of each bench the runs were made on that is still where the manifest says."""
    out = []
    for root in dict.fromkeys(bench_of_run(d) for d in run_dirs):
        try:
            doc = read_yaml(root / "bench.yaml") if root else None
        except InputError:
            continue  # only an ordering hint: the manifests' own orders still apply
        tiers = doc.get("tiers") if isinstance(doc, dict) else None
        if isinstance(tiers, list):
            out.append([str(t["name"]) for t in tiers if isinstance(t, dict) and "name" in t])
    return out


def _tier_orders(df: pl.DataFrame) -> list[list[str]]:
    """The tier orders a frame's manifests give: per run (or per sweep bench) its tiers by ``tier_index``."""
    by = "bench" if "bench" in df.columns else "run_id"
    t = df.select(by, "tier", "tier_index").drop_nulls().unique().sort(by, "tier_index", "tier")
    return [g["tier"].to_list() for _, g in t.group_by(by, maintain_order=True)]


def _merge_orders(orders: Iterable[list[str]]) -> list[str]:
    """One order holding each of ``orders``: a new name goes right after its predecessor in its own
    order, else right before its first known successor, else at the end.

    >>> _merge_orders([["small", "full"], ["core", "small", "medium", "full"], ["a"]])
    ['core', 'small', 'medium', 'full', 'a']
    """
    out: list[str] = []
    for order in orders:
        for i, name in enumerate(order):
            if name in out:
                continue
            if i:
                out.insert(out.index(order[i - 1]) + 1, name)
                continue
            after = [n for n in order[1:] if n in out]
            out.insert(out.index(after[0]) if after else len(out), name)
    return out


def run_folders(run_dirs: str | Path | Iterable[str | Path]) -> list[Path]:
    """The run folders of ``run_dirs`` (``NAME=`` labels dropped, a sweep folder expanded to its
    shards' runs, a folder of runs to the runs under it), found as :func:`load_runs` finds them."""
    found = _expand(
        [anchored(d) for d in parse_run_labels([run_dirs] if isinstance(run_dirs, (str, Path)) else run_dirs)[0]]
    )
    return [r for d in found for r in (sweep_run_dirs(d) if is_sweep(d) else [d])]


def bench_of_run(run_dir: str | Path) -> Path | None:
    """The bench folder a run was made on (from its manifest), or None if it is no longer there."""
    root = (read_manifest(run_dir).get("config") or {}).get("bench", {}).get("root")
    return Path(root) if root and (Path(root) / "bench.yaml").is_file() else None


def sweep_systems(
    systems: Iterable[str],
    preset: str = "demo",
    seeds: Iterable[int] = (1,),
    tiers: Iterable[str] | None = None,
    modes: Iterable[str] = ("dry",),
    name: str = "notebook",
    runs_root: str | Path = "runs",
    data_root: str | Path = "data",
    workers: int = 2,
    dashboard: str | None = ":8787",
    progress: bool = True,
) -> Path:
    """Run (or resume) a sweep of ``systems`` over the ``preset`` bench of each seed, one shard per
    (seed, system, tier, mode) on a ``workers``-process Dask ``LocalCluster``; returns the sweep folder
    (``runs/sweep_<name>``). The fields are checked as a SWEEP.yaml's are (``memeval sweep``)."""
    fields = {
        "name": name,
        "systems": list(systems),
        "presets": [preset],
        "seeds": list(seeds),
        "tiers": list(tiers) if tiers else None,
        "modes": list(modes),
        "data_root": str(anchored(data_root)),
    }
    spec = check_spec(fields, "<sweep_systems parameters>")
    result = run_sweep(
        spec,
        runs_root=anchored(runs_root),
        n_workers=workers,
        dashboard_address=dashboard,
        progress=progress,
        log=print,
    )
    for sid, o in result.outcome.items():
        if o.get("status") != "complete":
            print(f"shard {sid}: {o.get('status')} {o.get('error', '')} (rerun to resume)")
    return result.sweep_dir
