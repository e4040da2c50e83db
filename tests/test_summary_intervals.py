"""``memeval summary`` shows every score with its interval: ``_lo``/``_hi`` columns in CSV, and
``0.473 [0.353, 0.623]`` in the table by default; headers never wrapped, one missing-value symbol."""

from __future__ import annotations

import csv
import io
import re

import pytest

from memeval.analysis.aggregate import load_records
from memeval.cli import main
from memeval.analysis.intervals import bootstrap_means

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
    # per tier x axis: each score with its interval too; ungraded axes (no abstention in dry
    # retrieval-only runs) read "–", never null or NaN
    assert "| score" in out and re.search(r"\| \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] +\|", out)
    assert "–" in out and not re.search(r"\bnull\b|\bNaN\b|\bnan\b|\bNone\b", out)
    assert max(len(ln) for ln in lines) <= 100


def test_markdown_and_wide_tables_show_intervals_too(_tiny, capsys):
    _, run = _tiny
    for fmt in (["--format", "md"], ["--wide"]):
        out = _summary(capsys, run, "--no-bounds", *fmt)
        assert re.search(r"\| \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] +\|", out), fmt
        assert "weighted_lo" not in out and not re.search(r"\bnull\b|\bNaN\b", out)
