"""Errata (versioned gold corrections): the file format, its errors, and its use at grading time on a
bench of our own (the tiny generated lifelog bench), raw and corrected scores side by side."""

import hashlib
import json

import pytest

from memeval.bench import lifelog
from memeval.cli import main
from memeval.errors import InputError
from memeval.run import read_records, run_system
from memeval.scoring.errata import errata_from_text, load_errata

ERRATA = """\
bench: lifelog
corrections:
  - id: Q0001
    gold: Zanzibar
    reason: planted wrong on purpose, so the oracle now misses it
    source: tests/test_errata.py
  - id: Q0002
    drop: true
    reason: dropped on purpose
    source: tests/test_errata.py
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("errata")
    bench = lifelog.generate("tiny", 1, root / "tiny")
    (root / "errata.yaml").write_text(ERRATA, encoding="utf-8")
    plain = run_system(bench, "oracle", tiers=["core"], out=root / "plain", progress=False)
    fixed = run_system(bench, "oracle", tiers=["core"], out=root / "fixed", progress=False, errata=root / "errata.yaml")
    return root, plain, fixed


@pytest.mark.parametrize(
    "text, record, field",
    [
        ("corrections: [{id: Q1, reason: r, source: s}]", 1, "gold"),  # neither gold nor drop
        ("corrections: [{id: Q1, gold: x, drop: true, reason: r, source: s}]", 1, "gold"),  # both
        ("corrections: [{id: Q1, gold: x, source: s}]", 1, "reason"),
        ("corrections: [{id: Q1, gold: x, reason: r}]", 1, "source"),
        ("corrections: [{id: Q1, gold: x, reason: r, source: s}, {id: Q1, drop: true, reason: r, source: s}]", 2, "id"),
        ("corrections: [{id: Q1, gold: x, reason: r, source: s, golden: y}]", 1, "golden"),
        ("corrections: [{id: Q1, gold: x, gold_alts: [1], reason: r, source: s}]", 1, "gold_alts"),
        ("corrections: [{id: Q1, drop: yes please, reason: r, source: s}]", 1, "drop"),
        ("fixes: []", None, "corrections"),
    ],
)
def test_bad_errata_name_file_record_and_field(text, record, field):
    with pytest.raises(InputError) as e:
        errata_from_text(text, "e.yaml")
    assert (e.value.record, e.value.field) == (record, field)
    assert "e.yaml" in str(e.value)


def test_version_is_sha256sum_of_the_file(tiny):
    root, _, _ = tiny
    e = load_errata(root / "errata.yaml")
    assert e.sha256 == hashlib.sha256((root / "errata.yaml").read_bytes()).hexdigest()
    assert e.bench == "lifelog" and set(e.corrections) == {"Q0001", "Q0002"}


def test_run_applies_errata_and_keeps_the_raw_score(tiny):
    root, plain, fixed = tiny
    before = {r["qid"]: r for r in read_records(plain)}
    after = {r["qid"]: r for r in read_records(fixed)}
    assert before["Q0001"]["score"] == 1.0 and after["Q0001"]["score"] == 0.0  # graded against "Zanzibar"
    assert after["Q0001"]["score_raw"] == before["Q0001"]["score"]
    assert after["Q0002"]["score"] is None and after["Q0002"]["score_raw"] == before["Q0002"]["score"]
    digest = hashlib.sha256((root / "errata.yaml").read_bytes()).hexdigest()
    assert after["Q0002"]["ungraded_reason"].startswith(f"dropped by errata {digest[:12]}: dropped on purpose")
    untouched = [q for q in after if q not in ("Q0001", "Q0002")]
    assert all(after[q]["score"] == after[q]["score_raw"] == before[q]["score"] for q in untouched)
    grader = json.loads((fixed / "manifest.json").read_text())["config"]["grader"]
    assert grader["errata"]["sha256"] == digest and grader["errata"]["corrections"] == 2
    assert after["Q0003"]["grader"]["errata"]["sha256"] == digest  # every record says which version
    assert "errata" not in json.loads((plain / "manifest.json").read_text())["config"]["grader"]


def test_summary_shows_raw_and_corrected_side_by_side(tiny, capsys):
    _, plain, fixed = tiny
    assert main(["summary", str(fixed), "--no-bounds", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["overall"][0]
    recs = [r for r in read_records(fixed) if r["score"] is not None]
    w = sum(r["weight"] for r in recs)
    assert row["weighted"] == pytest.approx(sum(r["score"] * r["weight"] for r in recs) / w)
    assert row["weighted_raw"] == pytest.approx(sum(r["score_raw"] * r["weight"] for r in recs) / w)
    assert row["weighted_raw"] > row["weighted"] and row["errata_dropped"] == 1
    assert any("errata " in line for line in out["fairness"])  # the fairness line names the version


def test_regrade_with_errata(tiny, tmp_path):
    root, plain, _ = tiny
    again = main(
        ["regrade", str(plain), "--mode", "dry", "--errata", str(root / "errata.yaml"), "--out", str(tmp_path / "r")]
    )
    assert again == 0
    recs = {r["qid"]: r for r in read_records(tmp_path / "r")}
    assert recs["Q0001"]["score"] == 0.0 and recs["Q0001"]["score_raw"] == 1.0


def test_bad_errata_file_stops_the_run_before_anything_is_written(tiny, tmp_path, capsys):
    root, _, _ = tiny
    (tmp_path / "bad.yaml").write_text("corrections: [{id: Q1, gold: x}]\n")
    code = main(["run", "--bench", str(root / "tiny"), "--system", "oracle", "--errata", str(tmp_path / "bad.yaml"),
                 "--out", str(tmp_path / "run"), "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "bad.yaml" in err[0] and "reason" in err[0]
    assert not (tmp_path / "run").exists()
