"""No privileged channel to the gold: only the built-in oracle is shown the whole question; a system
offering ``prepare`` is refused with one line before anything is asked, and the oracle's run is marked
as a ceiling in its manifest."""

from __future__ import annotations

import pytest

from memeval.bench.model import Question, Session
from memeval.cli import main
from memeval.errors import MemevalError
from memeval.run import read_manifest, read_records, run_system
from memeval.systems.base import Recall
from memeval.systems.baselines import Oracle
from minibench import make_minibench


class GoldReader:
    """Five lines that would score 1.000: read the gold from the question handed to ``prepare``."""

    name, version, params = "gold-reader", "1", {}

    def reset(self) -> None:
        self.gold = ""

    def ingest(self, session: Session) -> None:
        pass

    def prepare(self, question: Question) -> None:
        self.gold = question.gold_answer

    def query(self, question: str, asked_at: str | None) -> Recall:
        return Recall(answer=self.gold)


class OracleLookalike(Oracle):
    """A subclass of the oracle is not the built-in oracle."""

    name = "oracle-lookalike"


@pytest.mark.parametrize("factory", ["GoldReader", "OracleLookalike"])
def test_a_system_offering_prepare_is_refused(tmp_path, factory):
    bench = make_minibench(tmp_path / "b")
    with pytest.raises(MemevalError) as e:
        run_system(bench, f"python:test_no_side_channel:{factory}", runs_root=tmp_path / "runs", progress=False)
    msg = str(e.value)
    assert "\n" not in msg and "prepare" in msg and "oracle" in msg
    assert f"system {factory} " in msg  # names the system
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("records.jsonl"))


def test_cli_refusal_is_one_line(tmp_path, capsys):
    bench = make_minibench(tmp_path / "b")
    argv = [
        "run",
        "--bench",
        str(bench),
        "--system",
        "python:test_no_side_channel:GoldReader",
        "--out",
        str(tmp_path / "r"),
    ]
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc != 0 and len(err.splitlines()) == 1 and "GoldReader" in err and "Traceback" not in err


def test_the_oracle_is_shown_the_question_and_marked_a_ceiling(tmp_path):
    bench = make_minibench(tmp_path / "b")
    rd = run_system(bench, "oracle", runs_root=tmp_path / "runs", progress=False)
    assert read_manifest(rd)["config"]["system"]["role"] == "ceiling"
    recs = read_records(rd)
    assert recs and all(r.get("error") is None for r in recs)
    rd2 = run_system(bench, "bm25", runs_root=tmp_path / "runs", progress=False)
    assert "role" not in read_manifest(rd2)["config"]["system"]
