"""LongMemEval-V2: importing the published format (tests/lme_v2_fixture.py), auditing it, runs on it."""

from __future__ import annotations

import json

import pytest

from memeval.bench import load_bench, read_questions, read_turns
from memeval.bench.loaders.longmemeval_v2 import build_id, index_trajectories
from memeval.cli import main
from memeval.run.records import read_records
from memeval.run.runner import run_system

from lme_v2_fixture import MEDIUM, MEDIUM_BUILDS, QUESTIONS, SMALL, TRAJECTORIES, make_fixture

pytestmark = pytest.mark.xdist_group("lme_v2")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_fixture(tmp_path_factory.mktemp("lmev2") / "data")


@pytest.fixture(scope="module")
def small(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "small"
    assert main(["import", "longmemeval-v2", str(data), "--tier", "small", "--out", str(out), "--no-progress"]) == 0
    return out


def test_small_tier_is_two_builds_of_whole_trajectories(data, small):
    bench = load_bench(small)
    assert bench.extra["n_builds"] == 2 and bench.extra["official"] is True
    listed = [p for p in data.rglob("*") if p.is_file() and p.name != "checksums.sha256"]
    assert bench.extra["checksums_verified"] == len(listed)  # every file the fixture listed
    turns = read_turns(small / "turns_small.jsonl")
    qs = read_questions(small / "questions_small.jsonl")
    assert {q.id for q in qs} == {q["id"] for q in QUESTIONS}
    web = {q.haystack for q in qs if q.extra["domain"] == "web"}
    assert web == {build_id(SMALL["w_static_1"])}
    # a session per trajectory in haystack order: overview + one turn per state
    for hid in {q.haystack for q in qs}:
        sessions = list(dict.fromkeys(t.session_id for t in turns if t.haystack == hid))
        ids = SMALL[next(q.id for q in qs if q.haystack == hid)]
        assert sessions == ids
    shop = [t for t in turns if t.session_id == "web_shop_001" and t.haystack in web]
    assert len(shop) == 1 + 3 and shop[0].image is None and "Goal: Find the price of the blue kettle" in shop[0].text
    s1 = shop[2]
    assert "state 1" in s1.text and "URL: http://shop.local/kitchen" in s1.text and "Action: click [40]" in s1.text
    assert "Thought: Open the product page." in s1.text and "[41] StaticText '$29.99'" in s1.text
    assert (small / s1.image).is_file()
    q = next(q for q in qs if q.id == "w_dyn_1")
    assert q.axis == "UPDATE" and (small / q.extra["question_image"]).is_file()
    abs_q = next(q for q in qs if q.id == "w_static_abs_1")
    assert abs_q.axis == "FALSE_MEMORY" and abs_q.scored_as == "FALSE_MEMORY"


def test_screenshot_bytes_are_the_release_s(data, small):
    turns = read_turns(small / "turns_small.jsonl")
    t = next(t for t in turns if t.session_id == "ent_incident_004" and "state 2" in t.text)
    assert (small / t.image).read_bytes() == (data / "screenshots/ent_incident_004/2.png").read_bytes()


def test_medium_tier_builds_each_distinct_ordered_haystack_once(data, tmp_path):
    out = tmp_path / "m"
    assert main(["import", "longmemeval-v2", str(data), "--tier", "medium", "--out", str(out), "--no-progress"]) == 0
    bench = load_bench(out)
    assert bench.extra["n_builds"] == MEDIUM_BUILDS == len({tuple(v) for v in MEDIUM.values()})
    builds = bench.extra["builds"]
    assert sorted(builds[build_id(MEDIUM["w_static_1"])]["questions"]) == ["w_proc_1", "w_static_1"]
    # same ids, another order: another build
    assert build_id(MEDIUM["w_dyn_1"]) in builds and build_id(MEDIUM["w_dyn_1"]) != build_id(MEDIUM["w_static_1"])
    turns = read_turns(out / "turns_medium.jsonl")
    n_states = {t["id"]: len(t["states"]) for t in TRAJECTORIES}
    want = sum(sum(1 + n_states[i] for i in ids) for ids in {tuple(v) for v in MEDIUM.values()})
    assert len(turns) == want


def test_text_only_drops_images_and_is_not_official(data, tmp_path):
    out = tmp_path / "t"
    args = ["import", "longmemeval-v2", str(data), "--tier", "small", "--text-only", "--out", str(out)]
    assert main([*args, "--no-progress"]) == 0
    bench = load_bench(out)
    assert bench.extra["official"] is False and bench.extra["text_only"] is True
    assert all(t.image is None for t in read_turns(out / "turns_small.jsonl"))
    assert not (out / "screenshots").exists() and not (out / "question_images").exists()


def test_index_holds_offsets_not_records(data):
    idx = index_trajectories(data / "trajectories.jsonl")
    raw = (data / "trajectories.jsonl").read_bytes()
    off, size, dom = idx["ent_catalog_005"]
    assert json.loads(raw[off : off + size])["id"] == "ent_catalog_005" and dom == "enterprise"


def _bad(tmp_path, capsys, mutate, *args):
    d = make_fixture(tmp_path / "d", checksums=False)
    mutate(d)
    out = tmp_path / "b"
    code = main(["import", "longmemeval-v2", str(d), "--out", str(out), "--no-progress", *args])
    err = capsys.readouterr().err.strip()
    assert code != 0 and not out.exists() and "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    return err


def _edit_line(path, n, edit):
    lines = path.read_text().splitlines()
    obj = json.loads(lines[n])
    edit(obj)
    lines[n] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n")


def test_bad_input_is_one_line_naming_file_record_field(tmp_path, capsys):
    err = _bad(
        tmp_path / "1",
        capsys,
        lambda d: _edit_line(d / "trajectories.jsonl", 1, lambda o: o["states"][1].update(url=7)),
    )
    assert "trajectories.jsonl" in err and "web_admin_002" in err and "states[1].url" in err
    err = _bad(
        tmp_path / "2",
        capsys,
        lambda d: _edit_line(d / "questions.jsonl", 2, lambda o: o.update(eval_function="exact")),
    )
    assert (
        "questions.jsonl record 3 (id 'w_dyn_1')" in err
        and "eval_function" in err
        and "unknown eval function: exact" in err
    )
    err = _bad(
        tmp_path / "3",
        capsys,
        lambda d: (d / "screenshots/web_forum_003/1.png").unlink(),
    )
    assert "web_forum_003" in err and "states[1].screenshot" in err and "--text-only" in err


def test_unknown_and_cross_domain_trajectories_are_refused(tmp_path, capsys):
    def unknown(d):
        h = json.loads((d / "haystacks/lme_v2_small.json").read_text())
        h["e_proc_1"] = ["ent_incident_004", "nope"]
        (d / "haystacks/lme_v2_small.json").write_text(json.dumps(h))

    err = _bad(tmp_path / "1", capsys, unknown)
    assert "lme_v2_small.json" in err and "e_proc_1" in err and "'nope'" in err

    def cross(d):
        h = json.loads((d / "haystacks/lme_v2_small.json").read_text())
        h["e_proc_1"] = ["web_shop_001"]
        (d / "haystacks/lme_v2_small.json").write_text(json.dumps(h))

    err = _bad(tmp_path / "2", capsys, cross)
    assert "domain 'web'" in err


def test_checksum_mismatch_is_refused(tmp_path, capsys):
    d = make_fixture(tmp_path / "d")
    with open(d / "questions.jsonl", "a") as fh:
        fh.write("\n")
    code = main(["import", "longmemeval-v2", str(d), "--out", str(tmp_path / "b"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "checksums.sha256" in err and "questions.jsonl" in err and "does not match" in err


def test_tier_flag_belongs_to_v2(tmp_path, capsys):
    assert main(["import", "locomo", "x.json", "--tier", "small", "--out", str(tmp_path / "b")]) == 1
    assert "longmemeval-v2 only" in capsys.readouterr().err


def test_audit_bm25_and_oracle_runs(small, tmp_path, capsys):
    assert main(["audit", str(small)]) in (0, 1)
    out = capsys.readouterr().out
    assert "PASS evidence-resolves" in out and "no_evidence_published=6" in out
    assert "PASS images-resolve" in out and "PASS manifest-hash" in out
    for system in ("bm25", "oracle"):
        run_system(str(small), system, out=tmp_path / system, progress=False)
        recs = read_records(tmp_path / system)
        assert len(recs) == len(QUESTIONS) and all(r.get("error") is None for r in recs)
    bm = read_records(tmp_path / "bm25")
    kettle = next(r for r in bm if r["qid"] == "w_static_1")
    assert any("$29.99" in m for m in kettle["memories_returned"])


def test_vector_hybrid_context_and_http_systems_run_on_it(small, tmp_path):
    from memeval.systems import BM25
    from memeval.systems.server import ReferenceServer
    from memeval.testing.chat_stub import ScriptedChatServer

    with ScriptedChatServer(lambda body: "unused") as emb:
        specs = [
            f"vector:k=4,model=stub-embed,base_url={emb.base_url},cache={tmp_path / 'v.sqlite'}",
            f"hybrid:k=4,model=stub-embed,base_url={emb.base_url},cache={tmp_path / 'h.sqlite'}",
            "context:tokens=500",
        ]
        for i, spec in enumerate(specs):
            run_system(str(small), spec, out=tmp_path / f"s{i}", progress=False)
            recs = read_records(tmp_path / f"s{i}")
            assert len(recs) == len(QUESTIONS) and all(r["error"] is None for r in recs), spec
            assert all(r["memories_returned"] for r in recs), spec
    with ReferenceServer(BM25(k=5)) as srv:
        run_system(str(small), srv.url, out=tmp_path / "http", progress=False)
    recs = read_records(tmp_path / "http")
    assert len(recs) == len(QUESTIONS) and all(r["error"] is None for r in recs)
    kettle = next(r for r in recs if r["qid"] == "w_static_1")
    assert any("$29.99" in m for m in kettle["memories_returned"])
    # the served system got the screenshots as image paths inside the bench folder
    assert any(str(m.get("image")).startswith("screenshots/") for r in recs for m in r["memories"] or [])


def test_builds_that_would_not_fit_the_disk_are_refused_before_writing(data, tmp_path, capsys, monkeypatch):
    import shutil as sh
    from types import SimpleNamespace

    monkeypatch.setattr(sh, "disk_usage", lambda p: SimpleNamespace(total=10**12, used=10**12 - 100, free=100))
    out = tmp_path / "b"
    code = main(["import", "longmemeval-v2", str(data), "--tier", "medium", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code != 0 and "GiB free" in err and not out.exists()
