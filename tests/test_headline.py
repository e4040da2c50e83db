"""The closing headline of ``memeval run``: the fast typed read and the checked reader agree, and bad
or torn record files still end in the checked reader's one-line error or its partial-tail rule."""

import json
import shutil

import pytest

from memeval.analysis.runs import headline_lines
from memeval.errors import InputError
from memeval.run import read_records


@pytest.fixture
def tiny_run(_tiny):
    """The session's dry bm25 run over the tiny preset (root conftest.py)."""
    return _tiny[1]


def _lines_from_checked_reader(rd):
    """The headline's numbers recomputed by hand from read_records (the reference)."""
    out = {}
    for r in read_records(rd):
        t = out.setdefault(r["tier"], {"n": 0, "graded": 0, "w": 0.0, "ws": 0, "s": 0.0})
        t["n"] += 1
        if r["score"] is not None:
            t["graded"] += 1
            t["w"] += r["score"] * r["weight"]
            t["ws"] += r["weight"]
            t["s"] += r["score"]
    return {
        tier: f"weighted {v['w'] / v['ws']:.3f}  unweighted {v['s'] / v['graded']:.3f}  n={v['n']} graded={v['graded']}"
        for tier, v in out.items()
    }


def test_headline_numbers_match_the_records(tiny_run):
    want = _lines_from_checked_reader(tiny_run)
    got = headline_lines(tiny_run)[1:]
    assert len(got) == len(want) == 4
    for line in got:
        tier = line.split()[0]
        assert want[tier] in line and "errors=0 retries=0" in line


def test_torn_tail_is_left_out_as_read_records_leaves_it(tiny_run, tmp_path):
    rd = tmp_path / "run"
    shutil.copytree(tiny_run, rd)
    with open(rd / "records.jsonl", "a") as fh:
        fh.write('{"tier": "core", "qid": "x"')  # a killed writer's partial last line
    assert headline_lines(rd) == headline_lines(tiny_run)


def test_a_bad_value_gets_the_checked_readers_error(tiny_run, tmp_path):
    rd = tmp_path / "run"
    shutil.copytree(tiny_run, rd)
    lines = (rd / "records.jsonl").read_text().splitlines()
    rec = json.loads(lines[4])
    rec["weight"] = "heavy"
    lines[4] = json.dumps(rec)
    (rd / "records.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"records.jsonl:5: field 'weight'"):
        headline_lines(rd)
