"""``memeval summary`` shows every score with its interval: ``_lo``/``_hi`` columns in CSV, and
``0.473 [0.353, 0.623]`` in the table by default; headers never wrapped, one missing-value symbol. The
floor and the ceiling (the manifest marks the oracle) are one line each beside the systems, never rows
ranked among them; one run with its bounds fits in under 60 lines."""

from __future__ import annotations

import csv
import io
import re

import pytest

from memeval.analysis.aggregate import load_records
from memeval.cli import main
from memeval.analysis.intervals import bootstrap_means
from tests.built_once import built_once

CELL = re.compile(r"^(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]$")


@pytest.fixture(scope="module")
def expected(_tiny):
    """Per tier: (weighted, lo, hi) and (unweighted, lo, hi), from the interval code on the records."""
    _, run = _tiny
    df = load_records([run])
    out = {}
    for col, weight in (("weighted", "weight"), ("unweighted", None)):
        for r in bootstrap_means(df, ["system", "tier"], weight=weight).iter_rows(named=True):
            out[(r["tier"], col)] = (r["mean"], r["lo"], r["hi"])
    return out


def _summary(capsys, *argv) -> str:
    assert main(["summary", *map(str, argv)]) == 0
    return capsys.readouterr().out


def test_csv_has_interval_columns_beside_each_score(_tiny, expected, capsys):
    _, run = _tiny
    text = _summary(capsys, run, "--no-bounds", "--format", "csv")
    header = text.splitlines()[0].split(",")
    for col in ("weighted", "unweighted"):
        i = header.index(col)
        assert header[i + 1 : i + 3] == [f"{col}_lo", f"{col}_hi"]
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["tier"] for r in rows} == {"core", "small", "medium", "full"}
    for r in rows:
        for col in ("weighted", "unweighted"):
            mean, lo, hi = expected[(r["tier"], col)]
            got = float(r[col]), float(r[f"{col}_lo"]), float(r[f"{col}_hi"])
            assert got == pytest.approx((mean, lo, hi)) and lo < hi  # tiny's tiers have spread


def test_table_shows_intervals_by_default_with_one_missing_symbol(_tiny, expected, capsys):
    _, run = _tiny
    out = _summary(capsys, run, "--no-bounds")
    lines = out.splitlines()
    at = lines.index(next(ln for ln in lines if ln.startswith("| system") and "| weighted" in ln))
    header = [c.strip() for c in lines[at].strip("|").split("|")]
    assert lines[at + 1].startswith("|--")  # the header is one line: never wrapped
    seen = set()
    for ln in lines[at + 2 :]:
        if not ln.startswith("|"):
            break
        cells = dict(zip(header, (c.strip() for c in ln.strip("|").split("|"))))
        for col in ("weighted", "unweighted"):
            m = CELL.match(cells[col])
            assert m, cells[col]
            mean, lo, hi = expected[(cells["tier"], col)]
            assert m.groups() == (f"{mean:.3f}", f"{lo:.3f}", f"{hi:.3f}")
        seen.add(cells["tier"])
    assert seen == {"core", "small", "medium", "full"}
    # per tier x axis: a grid (axes down, tiers across), each score with its interval too; cells with
    # nothing graded read "–", never null or NaN; axes no tier graded (no abstention in dry
    # retrieval-only runs) are named on one line
    assert re.search(r"\| BASIC +\| \d\.\d{2} \[\d\.\d{2},\d\.\d{2}\] +\|", out)
    assert "not graded in any tier: ABSTAIN, FALSE_MEMORY" in out
    assert "–" in out and not re.search(r"\bnull\b|\bNaN\b|\bnan\b|\bNone\b", out)
    assert max(len(ln) for ln in lines) <= 100


def test_markdown_and_wide_tables_show_intervals_too(_tiny, capsys):
    _, run = _tiny
    for fmt in (["--format", "md"], ["--wide"]):
        out = _summary(capsys, run, "--no-bounds", *fmt)
        assert re.search(r"\| \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] +\|", out), fmt
        assert "weighted_lo" not in out and not re.search(r"\bnull\b|\bNaN\b", out)


@pytest.fixture(scope="module")
def with_bounds(_tiny, tmp_path_factory):
    """bm25, no_memory and oracle runs side by side in one runs/ folder (built once per session)."""
    bench, _ = _tiny

    def build(root):
        from memeval.run import run_system

        for s in ("bm25", "no_memory", "oracle"):
            run_system(bench, s, out=root / "runs" / s, progress=False)

    root, _ = built_once(tmp_path_factory, "summary-with-bounds", build)
    return root / "runs"


def test_one_run_with_its_bounds_is_under_60_lines_and_the_oracle_is_not_a_row(with_bounds, capsys):
    out = _summary(capsys, with_bounds / "bm25")
    lines = out.splitlines()
    assert len(lines) < 60 and max(len(ln) for ln in lines) <= 100
    rows = [ln for ln in lines if ln.startswith("| ")]
    assert not any(re.match(r"\| (oracle|no_memory) ", ln) for ln in rows)  # bounds are never table rows
    (ceiling,) = [ln for ln in lines if ln.startswith("ceiling oracle (weighted): ")]
    (floor,) = [ln for ln in lines if ln.startswith("floor no_memory (weighted): ")]
    assert re.search(r"core \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] n=\d+", ceiling + floor)
    assert "run oracle: oracle, mode dry, status complete -- ceiling, not ranked" in out
    # asked for, the bounds stand in every table again
    long = _summary(capsys, with_bounds / "bm25", "--bounds-by-axis")
    assert re.search(r"^\| oracle +\| core +\| BASIC", long, re.M) and len(long.splitlines()) > 100


def test_machine_formats_mark_the_ceiling_by_its_manifest_role(with_bounds, capsys):
    import json

    rows = list(csv.DictReader(io.StringIO(_summary(capsys, with_bounds / "bm25", "--format", "csv"))))
    assert {(r["system"], r["role"]) for r in rows} == {("bm25", ""), ("no_memory", "floor"), ("oracle", "ceiling")}
    doc = json.loads(_summary(capsys, with_bounds / "bm25", "--format", "json"))
    assert {r["system"]: r["role"] for r in doc["runs"]} == {"bm25": None, "no_memory": "floor", "oracle": "ceiling"}
    man = json.loads((with_bounds / "oracle" / "manifest.json").read_text())
    assert man["config"]["system"]["role"] == "ceiling"  # the mark the summary reads
