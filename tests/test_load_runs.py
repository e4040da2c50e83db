"""``memeval.load_runs``: a folder of runs searched at any depth, and tiers as an ordered categorical."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

import memeval
from memeval.run import run_system
from memeval.run.records import read_records

BENCH_ORDER = ["core", "small", "medium", "full"]  # the lifelog bench's tier order (bench.yaml)


@pytest.fixture(scope="module")
def project(_tiny, tmp_path_factory) -> tuple[Path, list[Path]]:
    """``runs/`` holding a full run at the top, a run of two tiers (full before small in text order)
    two levels down, and a ``notes/`` folder with no run."""
    bench, tiny_run = _tiny
    root = tmp_path_factory.mktemp("project")
    top = root / "runs" / tiny_run.name
    shutil.copytree(tiny_run, top)
    deep = run_system(
        bench, "no_memory", tiers=["full", "small"], runs_root=root / "runs" / "old" / "may", progress=False
    )
    (root / "runs" / "notes").mkdir()
    (root / "runs" / "notes" / "readme.txt").write_text("no run here")
    return root, [top, Path(deep)]


def test_a_folder_of_runs_loads_every_run_under_it(project):
    root, runs = project
    df = memeval.load_runs(root / "runs")
    assert sorted(df["run_id"].unique()) == sorted(r.name for r in runs)
    assert df.height == sum(len(list(read_records(r))) for r in runs)
    assert sorted(memeval.run_folders(root / "runs")) == sorted(runs)
    # a list of folders still works, and a run listed twice (as itself and in its folder) counts once
    assert memeval.load_runs([root / "runs", runs[1]]).height == df.height


def test_a_folder_without_runs_is_one_line_naming_it(project, tmp_path):
    root, _ = project
    for folder, why in ((root / "runs" / "notes", "no runs here"), (tmp_path / "missing", "no such run folder")):
        with pytest.raises(memeval.MemevalError) as e:
            memeval.load_runs(folder)
        assert str(folder) in str(e.value) and why in str(e.value) and "\n" not in str(e.value)


def test_tier_is_an_enum_in_the_bench_order(project):
    root, runs = project
    df = memeval.load_runs(root / "runs")
    assert df["tier"].dtype == pl.Enum(BENCH_ORDER)
    assert df.sort("tier")["tier"].unique(maintain_order=True).to_list() == BENCH_ORDER
    grouped = df.group_by("tier").len().sort("tier")["tier"].to_list()
    assert grouped == BENCH_ORDER and grouped != sorted(grouped)
    # the two-tier run alone: its manifest lists full, small; the bench puts small first
    alone = memeval.load_runs(runs[1])
    assert alone.sort("tier")["tier"].unique(maintain_order=True).to_list() == ["small", "full"]


def test_pandas_tier_is_an_ordered_categorical(project):
    root, _ = project
    pdf = memeval.load_runs(root / "runs").to_pandas()
    assert pdf["tier"].cat.ordered and list(pdf["tier"].cat.categories) == BENCH_ORDER
    sizes = pdf.groupby("tier", observed=True).size()
    assert list(sizes.index) == BENCH_ORDER
    assert list(pdf.sort_values("tier")["tier"].drop_duplicates()) == BENCH_ORDER
