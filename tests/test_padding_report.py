"""Any bench becomes a saturation test: the book suite padded with lifelog filler, bm25 per padding size
in the degradation report.

The padding sizes (100 and 200 filler turns per case) are small on purpose: the subject is that a padded
bench nests, audits clean and reads as one curve per size, not how large it gets (300 and 900 wrote
~111,000 turns where 100 and 200 write ~45,000; tests/test_padding.py checks the padding itself)."""

from pathlib import Path

import polars as pl

from booksuite_paths import SUITE
from browser import load_html, require_chromium
from memeval.analysis.aggregate import load_records, overall_table
from memeval.bench import load_bench
from memeval.audit import audit
from memeval.cli import main

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"


def test_padded_book_suite_degradation_report(tmp_path, monkeypatch):
    assert main(["import", "booksuite", str(SUITE), "--out", str(tmp_path / "book")]) == 0
    assert (
        main(
            [
                "pad",
                str(tmp_path / "book"),
                "--sizes",
                "100,200",
                "--seed",
                "1",
                "--source",
                "lifelog",
                "--out",
                str(tmp_path / "padded"),
            ]
        )
        == 0
    )
    bench = load_bench(tmp_path / "padded")
    assert bench.tier_names == ("all", "all_pad100", "all_pad200")
    report = audit(tmp_path / "padded")
    assert report.check("tiers-nested").status == "pass" and report.check("story-identical").status == "pass"

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "padded.html"
    assert (
        main(
            [
                "report",
                str(NOTEBOOKS / "degradation.ipynb"),
                "-p",
                "bench_dir",
                str(tmp_path / "padded"),
                "-p",
                "systems",
                "[bm25, oracle]",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    runs = sorted((tmp_path / "runs").iterdir())
    table = overall_table(load_records(runs)).filter(pl.col("system") == "bm25")
    assert table["tier"].to_list() == ["all", "all_pad100", "all_pad200"]
    assert table["graded"].to_list() == [8, 8, 8]  # the 8 cases with keyword facts
    require_chromium()
    page = load_html(out, tmp_path / "padded.png")
    assert page.page_errors == () and page.console_errors == () and page.blocked_requests == ()
    assert page.plotly_svgs >= 2 and "all_pad200" in page.text
