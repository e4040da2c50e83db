"""glasshouse loader: a tiny folder in the real file shape, written here."""

import json

import pytest
import yaml
from PIL import Image

from memeval.bench import load_bench, read_questions, read_turns
from memeval.bench.loaders.glasshouse import import_glasshouse
from memeval.cli import main
from memeval.errors import InputError, MemevalError

MISO = ("user", "I adopted a cat and named her Miso.")
LYON = ("user", "We finally moved to Lyon.")
XL = ("user", "Mi hermana vive en Madrid.")


def _filler(tag, n=2):
    return [
        ("user", f"filler question {tag}.{i}") if i % 2 == 0 else ("assistant", f"filler answer {tag}.{i}")
        for i in range(n)
    ]


def _tier(sessions):
    """sessions: list of (date, [(speaker, text)...], image_on_first_turn?) → turn dicts, ids per file."""
    rows, tid = [], 0
    for sid, (date, turns, img) in enumerate(sessions, 1):
        for k, (speaker, text) in enumerate(turns):
            tid += 1
            row = {"turn_id": tid, "session_id": sid, "speaker": speaker, "text": text, "date": date}
            if img and k == 0:
                row.update(image="img/img01.png", image_no=1)
            rows.append(row)
    return rows


def _q(qid, ev, sess, axis="BASIC", **kw):
    return {
        "id": qid,
        "axis": axis,
        "need": ["F001"],
        "question_en": kw.pop("question_en", "?"),
        "gold_answer": kw.pop("gold", "x"),
        "gold_alts": [],
        "expect": "answer",
        "evidence_turns": ev,
        "evidence_sessions": sess,
        **kw,
    }


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def make_folder(root):
    root.mkdir()
    (root / "img").mkdir()
    Image.new("RGB", (2, 2), (200, 40, 40)).save(root / "img" / "img01.png")
    core = [
        ("2026-01-05", [MISO, ("assistant", "Lovely!")], False),
        ("2026-02-01", [LYON, ("assistant", "Congrats.")], True),
    ]
    small = [
        ("2025-12-01", _filler("a"), False),
        core[0],
        ("2026-01-20", _filler("b"), False),
        core[1],
        ("2026-03-01", [XL, ("assistant", "¡Qué bien!")], False),
    ]
    medium = [("2025-11-01", _filler("c", 3), False)] + small
    _jsonl(root / "glasshouse_v0.1_core.jsonl", _tier(core))
    _jsonl(root / "glasshouse_v0.1_small.jsonl", _tier(small))
    _jsonl(root / "glasshouse_v0.1_medium.jsonl", _tier(medium))
    _jsonl(root / "questions_core.jsonl", [_q("Q001", [1], [1], gold="Miso"), _q("Q002", [3], [2], gold="Lyon")])
    _jsonl(root / "questions_small.jsonl", [_q("Q001", [3], [2], gold="Miso"), _q("Q002", [7], [4], gold="Lyon")])
    _jsonl(root / "questions_medium.jsonl", [_q("Q001", [6], [3], gold="Miso"), _q("Q002", [10], [5], gold="Lyon")])
    _jsonl(
        root / "questions_xling.jsonl",
        [
            _q(
                "X001",
                [3],
                [2],
                axis="XLING_QUERY",
                question_en="What is the cat called?",
                question="¿Cómo se llama la gata?",
                query_lang="es",
                store_lang="en",
                source_id="Q001",
                gold="Miso",
            ),
            _q(
                "X002",
                [9],
                [5],
                axis="XLING_STORE",
                question_en="Where does the sister live?",
                query_lang="en",
                store_lang="es",
                gold="Madrid",
            ),
        ],
    )
    _jsonl(
        root / "glasshouse_v0.1_probes.jsonl",
        [
            {
                "id": "P001",
                "axis": "FALSE_MEMORY",
                "question_en": "Why did you give Miso away?",
                "expect": "no_memory",
                "kind": "invert",
                "false_claim_en": "the cat was given away",
                "source_fact": "F001",
            },
            {
                "id": "P002",
                "question_en": "How was Berlin?",
                "expect": "no_memory",
                "kind": "ghost",
                "false_claim_en": "moved to Berlin",
                "source_fact": "F002",
            },
        ],
    )
    return root


def test_load_pairs_files_and_keeps_bytes(tmp_path):
    src = make_folder(tmp_path / "gh")
    out = tmp_path / "bench"
    import_glasshouse(src, out)
    bench = load_bench(out)
    assert bench.tier_names == ("core", "small", "medium") and bench.version == "0.1"
    meta = yaml.safe_load((out / "bench.yaml").read_text())
    assert meta["question_files"] == {
        "core": ["questions_core.jsonl"],
        "small": ["questions_small.jsonl", "questions_xling.jsonl"],
        "medium": ["questions_medium.jsonl"],
    }
    assert list(meta["not_attached"]) == ["questions_xling.jsonl"]
    assert list(meta["not_attached"]["questions_xling.jsonl"]) == ["medium"]
    # turn files point at the originals, byte for byte
    for t in bench.tiers:
        assert t.turns_file == f"glasshouse_v0.1_{t.name}.jsonl"
        assert (out / t.turns_file).read_bytes() == (src / t.turns_file).read_bytes()
    # a tier with one question file points at it; with xling, the original lines concatenated
    assert bench.tier("core").questions_file == "questions_core.jsonl"
    assert (out / "questions_core.jsonl").read_bytes() == (src / "questions_core.jsonl").read_bytes()
    small = bench.tier("small")
    assert small.questions_file == "bench_questions_small.jsonl"
    assert (small.n_turns, small.n_sessions, small.n_questions) == (10, 5, 4)
    assert (out / small.questions_file).read_bytes() == (src / "questions_small.jsonl").read_bytes() + (
        src / "questions_xling.jsonl"
    ).read_bytes()
    # probes: the named set 'probes' of every tier (none has evidence); the row without an axis gets
    # FALSE_MEMORY, so the file is a rewritten copy with the other line kept byte for byte
    assert {t.name: dict(t.question_sets) for t in bench.tiers} == {
        t: {"probes": "bench_probes.jsonl"} for t in ("core", "small", "medium")
    }
    originals = (src / "glasshouse_v0.1_probes.jsonl").read_text(encoding="utf-8").splitlines(True)
    lines = (out / "bench_probes.jsonl").read_text(encoding="utf-8").splitlines(True)
    assert lines[0] == originals[0]
    assert json.loads(lines[1]) == {**json.loads(originals[1]), "axis": "FALSE_MEMORY"}
    probes = {q.id: q for q in read_questions(out / small.question_sets["probes"])}
    assert probes["P002"].axis == "FALSE_MEMORY" and probes["P002"].kind == "ghost"
    qs = {q.id: q for q in read_questions(out / small.questions_file)}
    assert (
        qs["X001"].text_to_ask == "¿Cómo se llama la gata?" and qs["X002"].text_to_ask == "Where does the sister live?"
    )
    turns = {t.turn_id: t for t in read_turns(out / small.turns_file)}
    assert turns[qs["Q001"].evidence_turns[0]].text == MISO[1]
    assert turns[qs["X002"].evidence_turns[0]].text == XL[1]
    assert (out / "img" / "img01.png").read_bytes() == (src / "img" / "img01.png").read_bytes()


def test_question_file_paired_with_another_tier_is_refused(tmp_path):
    src = make_folder(tmp_path / "gh")
    # a small-tier question file put where the core one belongs: ids are per tier file
    (src / "questions_core.jsonl").write_bytes((src / "questions_small.jsonl").read_bytes())
    with pytest.raises(InputError) as e:
        import_glasshouse(src, tmp_path / "bench")
    msg = str(e.value)
    assert msg.startswith(
        f"{src / 'questions_core.jsonl'}:2: field 'evidence_turns': question 'Q002' cannot be "
        "paired with glasshouse_v0.1_core.jsonl: evidence turn 7 does not exist"
    )
    assert not (tmp_path / "bench").exists()
    # same ids, other sessions: the session cross-check catches it
    src2 = make_folder(tmp_path / "gh2")
    _jsonl(src2 / "questions_small.jsonl", [_q("Q001", [1], [2])])
    with pytest.raises(
        InputError,
        match=r"questions_small.jsonl:1: field 'evidence_sessions'.*evidence turn 1 is in "
        r"session 1, not in evidence_sessions \[2\]",
    ):
        import_glasshouse(src2, tmp_path / "bench")


def test_explicit_pairing(tmp_path, capsys):
    src = make_folder(tmp_path / "gh")
    with pytest.raises(InputError, match=r"questions_xling.jsonl:1: .*cannot be paired with glasshouse_v0.1_medium"):
        import_glasshouse(src, tmp_path / "b", pairs={"questions_xling.jsonl": ["medium"]})
    assert (
        main(["import", "glasshouse", str(src), "--out", str(tmp_path / "b"), "--pair", "questions_xling.jsonl=medium"])
        == 2
    )
    assert "cannot be paired" in capsys.readouterr().err
    import_glasshouse(src, tmp_path / "b", pairs={"questions_xling.jsonl": ["small"]})
    meta = yaml.safe_load((tmp_path / "b" / "bench.yaml").read_text())
    assert meta["question_files"]["small"][1] == "questions_xling.jsonl"
    assert "questions_xling.jsonl" not in meta["question_files"]["medium"]


def test_xling_resolving_nowhere_and_missing_image(tmp_path):
    src = make_folder(tmp_path / "gh")
    _jsonl(src / "questions_xling.jsonl", [_q("X001", [99], [5], axis="XLING_STORE")])
    with pytest.raises(MemevalError, match="resolves in no tier"):
        import_glasshouse(src, tmp_path / "b")
    src = make_folder(tmp_path / "gh2")
    (src / "img" / "img01.png").unlink()
    with pytest.raises(
        InputError,
        match=r"glasshouse_v0.1_core.jsonl record turn_id 3: field 'image': "
        r"file 'img/img01.png' not found",
    ):
        import_glasshouse(src, tmp_path / "b")
    assert not (tmp_path / "b").exists()


def test_probe_file_kept_as_is_and_audit(tmp_path):
    src = make_folder(tmp_path / "gh")
    rows = [json.loads(x) for x in (src / "glasshouse_v0.1_probes.jsonl").read_text().splitlines()]
    _jsonl(src / "glasshouse_v0.1_probes.jsonl", [{**r, "axis": "FALSE_MEMORY"} for r in rows])
    import_glasshouse(src, tmp_path / "b")
    bench = load_bench(tmp_path / "b")
    assert bench.tier("small").question_sets == {"probes": "glasshouse_v0.1_probes.jsonl"}
    assert (tmp_path / "b" / "glasshouse_v0.1_probes.jsonl").read_bytes() == (
        src / "glasshouse_v0.1_probes.jsonl"
    ).read_bytes()
    from memeval.audit import audit

    report = audit(tmp_path / "b")
    for check in (
        "manifest-hash",
        "manifest-consistent",
        "ids-unique",
        "dates-chronological",
        "evidence-resolves",
        "images-resolve",
        "evidence-contains-gold",
        "tiers-nested",
        "story-identical",
        "evidence-ceiling",
    ):
        assert report.check(check).status == "pass", report.summary()


def test_malformed_tier_line_names_file_line_field(tmp_path):
    src = make_folder(tmp_path / "gh")
    p = src / "glasshouse_v0.1_small.jsonl"
    lines = p.read_text(encoding="utf-8").splitlines(True)
    row = json.loads(lines[2])
    del row["text"]
    lines[2] = json.dumps(row) + "\n"
    p.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as e:
        import_glasshouse(src, tmp_path / "b")
    assert str(e.value) == f"{p}:3: field 'text': missing"
    assert not (tmp_path / "b").exists()


def test_sources_are_copied_not_linked_and_hashes_are_sha256sum(tmp_path):
    """Editing the imported bench's file never edits the source (no hard link), and each
    ``source_files`` sha256 is what ``sha256sum`` prints for the source file (bytes only)."""
    import hashlib
    import shutil
    import subprocess

    src = make_folder(tmp_path / "gh")
    out = tmp_path / "bench"
    import_glasshouse(src, out)
    original = (src / "glasshouse_v0.1_core.jsonl").read_bytes()
    copied = out / "glasshouse_v0.1_core.jsonl"
    assert copied.stat().st_ino != (src / "glasshouse_v0.1_core.jsonl").stat().st_ino
    with open(copied, "a", encoding="utf-8") as fh:  # edit in place, as a user would
        fh.write("\n")
    assert (src / "glasshouse_v0.1_core.jsonl").read_bytes() == original
    assert (out / "img" / "img01.png").stat().st_nlink == 1
    meta = yaml.safe_load((out / "bench.yaml").read_text())
    files = meta["source_files"]
    assert {"glasshouse_v0.1_core.jsonl", "questions_core.jsonl", "questions_xling.jsonl"} <= set(files)
    for name, entry in files.items():
        assert entry["file"] == name
        assert entry["sha256"] == hashlib.sha256((src / name).read_bytes()).hexdigest()
    if shutil.which("sha256sum"):
        line = subprocess.run(["sha256sum", str(src / "questions_core.jsonl")], capture_output=True, text=True)
        assert files["questions_core.jsonl"]["sha256"] == line.stdout.split()[0]
