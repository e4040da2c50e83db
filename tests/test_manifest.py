"""The run manifest is typed and versioned: written from ``Manifest``, migrated on read (an older run
folder reads, resumes and regrades as a current one), refused when a newer memeval wrote it."""

import json

import pytest

from memeval.errors import InputError, SchemaError
from memeval.run import read_manifest, read_records, run_system
from memeval.run.folder import load_manifest
from memeval.run.manifest import MANIFEST_FIELDS, MANIFEST_VERSION, Manifest
from memeval.run.regrade import regrade_run
from minibench import make_minibench


def _as_version_1(run_dir):
    """Rewrite a run's manifest as memeval wrote it before manifests were versioned."""
    path = run_dir / "manifest.json"
    m = json.loads(path.read_text())
    for k in ("manifest_version", "resumed_at", "network_floor_ms"):
        m.pop(k, None)
    del m["config"]["question_set"]
    path.write_text(json.dumps(m))
    return m


@pytest.fixture
def run(tmp_path):
    bench = make_minibench(tmp_path / "b")
    return bench, run_system(bench, "bm25:k=2", tiers=["core"], out=tmp_path / "r", progress=False)


def test_a_run_writes_a_versioned_manifest_in_field_order(run):
    _, rd = run
    raw = json.loads((rd / "manifest.json").read_text())
    assert raw["manifest_version"] == MANIFEST_VERSION == 2
    assert list(raw) == [k for k in MANIFEST_FIELDS if k in raw]
    m = load_manifest(rd)
    assert m.status == "complete" and m.n_records == 4 and m.config["question_set"] == "main"
    assert m.to_json() == raw


def test_an_older_run_folder_is_migrated_on_read_and_resumes_as_the_same_run(run):
    bench, rd = run
    old = _as_version_1(rd)
    m = read_manifest(rd)
    assert m["manifest_version"] == 2 and m["config"]["question_set"] == "main"
    assert m["resumed_at"] == [] and m["network_floor_ms"] == {"before": None, "after": None}
    assert m["config_id"] == old["config_id"]
    again = run_system(bench, "bm25:k=2", tiers=["core"], out=rd, progress=False)  # resumes, nothing to ask
    raw = json.loads((again / "manifest.json").read_text())
    assert raw["manifest_version"] == 2 and len(raw["resumed_at"]) == 1 and len(read_records(again)) == 4


def test_an_older_run_folder_regrades(run, tmp_path):
    _, rd = run
    _as_version_1(rd)
    out = regrade_run(rd, "dry", out=tmp_path / "again")
    m = load_manifest(out)
    assert m.status == "complete" and m.regraded_from["run_id"] == "r" and m.config["question_set"] == "main"


def test_a_newer_manifest_is_refused_with_one_line(run):
    _, rd = run
    path = rd / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "manifest_version": 3}))
    with pytest.raises(InputError, match=r"manifest.json: field 'manifest_version': 3 is newer than this memeval"):
        read_manifest(rd)


def test_a_misspelled_field_is_refused_and_an_unknown_one_from_a_file_is_kept(run):
    _, rd = run
    with pytest.raises(SchemaError, match="'stauts' does not exist; did you mean 'status'"):
        Manifest.of({"run_id": "r", "config": {}, "stauts": "complete"})
    with pytest.raises(TypeError):
        Manifest(run_id="r", config={}, stauts="x")  # type: ignore[call-arg]
    path = rd / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "from_the_future": {"x": 1}}))
    m = load_manifest(rd)
    assert m.extra == {"from_the_future": {"x": 1}} and m.to_json()["from_the_future"] == {"x": 1}
