"""Padding: filler sessions inserted so that evidence stays byte-identical, dates stay in order and
tiers nest. Every property is checked here directly (the audit is run as a second opinion)."""

import json

import pytest
import yaml

from memeval.bench import Question, Turn, load_bench, read_questions, read_turns
from memeval.bench.io import save_bench, write_questions, write_turns
from memeval.bench.loaders._common import TierCounter
from memeval.bench.model import Bench
from memeval.bench.padding import pad
from memeval.cli import main
from memeval.errors import MemevalError

SPEAKERS = {"h1": ("Ann", "Bob"), "h2": ("Cat", "Dan"), "h3": ("user", "assistant")}


def make_bench(root, n_sessions=4, per_session=3):
    """Three haystacks; session 2 of each holds the evidence for its one question."""
    turns, qs = [], []
    for k, (h, (a, b)) in enumerate(SPEAKERS.items()):
        tid = 0
        for s in range(1, n_sessions + 1):
            for i in range(per_session):
                tid += 1
                text = f"{h} session {s} line {i}: small talk number {tid}."
                if s == 2 and i == 0:
                    text = f"{h}: my locker code is {1000 + k}."
                    ev = tid
                turns.append(Turn(tid, s, a if i % 2 == 0 else b, text, f"2024-0{s}-1{k}", haystack=h))
        qs.append(
            Question(
                id=f"{h}-q1",
                axis="BASIC",
                question_en="What is the locker code?",
                gold_answer=str(1000 + k),
                evidence_turns=(ev,),
                evidence_sessions=(2,),
                asked_at="2024-06-01",
                haystack=h,
            )
        )
    root.mkdir()
    write_turns(root / "turns_all.jsonl", turns)
    write_questions(root / "questions_all.jsonl", qs)
    tier = TierCounter().add_all(turns).tier("all", "turns_all.jsonl", "questions_all.jsonl", len(qs))
    save_bench(
        Bench(
            name="toy",
            version="1",
            tiers=(tier,),
            root=str(root),
            license="CC0",
            source="test",
            axis_map={"x": "BASIC"},
        ),
        root,
    )
    return turns, qs


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _content(d):
    return {k: v for k, v in d.items() if k not in ("turn_id", "session_id")}


def _is_subsequence(small, big):
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


@pytest.mark.parametrize("source", ["haystacks", "lifelog"])
def test_pad_keeps_evidence_nests_and_dates(tmp_path, source):
    src = tmp_path / "src"
    orig_turns, orig_qs = make_bench(src)
    out = tmp_path / "padded"
    pad(src, [28, 20], source=source, seed=7, out=out)
    bench = load_bench(out)
    assert bench.tier_names == ("all", "all_pad20", "all_pad28")
    assert [t.n_turns for t in bench.tiers] == [36, 60, 84]
    meta = yaml.safe_load((out / "bench.yaml").read_text())
    assert meta["generator"]["padding"] == {
        "source": source,
        "sizes": [20, 28],
        "seed": 7,
        "base_tier": "all",
        "unit": "turns per haystack",
        "from_bench": "toy 1",
        "from_content_hash": load_bench(src).content_hash,
    }
    assert meta["tiers_nest"] is True and meta["license"] == "CC0"
    # the original tier is the original files, byte for byte
    assert (out / "turns_all.jsonl").read_bytes() == (src / "turns_all.jsonl").read_bytes()

    orig_lines = _lines(src / "turns_all.jsonl")
    own_texts = {h: {t.text for t in orig_turns if t.haystack == h} for h in SPEAKERS}
    evidence_texts = {t.text for t in orig_turns if "locker" in t.text}
    previous = {h: [_content(d) for d in orig_lines if d["haystack"] == h] for h in SPEAKERS}
    for size, tier in zip((20, 28), bench.tiers[1:]):
        lines = _lines(out / tier.turns_file)
        qs = {q.id: q for q in read_questions(out / tier.questions_file)}
        for h in SPEAKERS:
            rows = [d for d in lines if d["haystack"] == h]
            assert len(rows) == size
            assert [d["turn_id"] for d in rows] == list(range(1, size + 1))
            sids = [d["session_id"] for d in rows]
            assert sids[0] == 1 and all(b - a in (0, 1) for a, b in zip(sids, sids[1:]))
            dates = [d["date"] for d in rows]
            assert dates == sorted(dates) and dates[-1] == "2024-04-1%d" % list(SPEAKERS).index(h)
            # evidence: the remapped id points at the same line content, byte for byte
            q = qs[f"{h}-q1"]
            (orig_q,) = [x for x in orig_qs if x.haystack == h]
            (o_line,) = [d for d in orig_lines if d["haystack"] == h and d["turn_id"] == orig_q.evidence_turns[0]]
            (p_line,) = [d for d in rows if d["turn_id"] == q.evidence_turns[0]]
            assert _content(p_line) == _content(o_line)
            assert json.dumps(_content(p_line), ensure_ascii=False) == json.dumps(_content(o_line), ensure_ascii=False)
            assert q.evidence_sessions == (p_line["session_id"],)
            # nesting: the smaller tier's turns (content, order) are a subsequence of this one's
            contents = [_content(d) for d in rows]
            assert _is_subsequence(previous[h], contents)
            previous[h] = contents
            # filler: never evidence, speakers mapped onto this haystack's own; from other haystacks
            # (source haystacks) or new text (lifelog)
            filler = [d for d in rows if d["text"] not in own_texts[h]]
            assert len(filler) == size - 12
            assert all(d["text"] not in evidence_texts for d in filler)
            from_others = [any(d["text"] in own_texts[o] for o in SPEAKERS if o != h) for d in filler]
            assert all(from_others) if source == "haystacks" else not any(from_others)
            assert {d["speaker"] for d in rows} == set(SPEAKERS[h])

    from memeval.audit import audit

    report = audit(out)
    for check in (
        "manifest-hash",
        "manifest-consistent",
        "ids-unique",
        "dates-chronological",
        "evidence-resolves",
        "evidence-contains-gold",
        "tiers-nested",
        "story-identical",
    ):
        assert report.check(check).status == "pass", report.summary()


def test_pad_is_deterministic_and_seeded(tmp_path):
    src = tmp_path / "src"
    make_bench(src)
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        pad(src, [24], seed=seed, out=tmp_path / name)
    f = "turns_all_pad24.jsonl"
    assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    assert (tmp_path / "a" / f).read_bytes() != (tmp_path / "c" / f).read_bytes()
    # the base files are copies: editing the padded bench never edits the bench it came from
    base = load_bench(src).tiers[0].turns_file
    assert (tmp_path / "a" / base).stat().st_ino != (src / base).stat().st_ino


def test_pad_refusals_leave_nothing(tmp_path):
    src = tmp_path / "src"
    make_bench(src)
    # 3 evidence-free sessions × 3 turns in each of 2 other haystacks: 18 filler turns at most
    with pytest.raises(MemevalError, match="ran out"):
        pad(src, [31], out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
    pad(src, [30], out=tmp_path / "o")
    assert load_bench(tmp_path / "o").tier("all_pad30").n_turns == 90
    # one haystack per tier: other haystacks do not exist; a size below the tier is refused
    one = tmp_path / "one"
    one.mkdir()
    turns = [Turn(i, 1 + (i - 1) // 2, "user", f"t{i}", "2024-01-0%d" % (1 + (i - 1) // 2)) for i in range(1, 7)]
    write_turns(one / "t.jsonl", turns)
    write_questions(one / "q.jsonl", [Question(id="Q1", axis="BASIC", question_en="?", evidence_turns=(3,))])
    save_bench(
        Bench(
            name="one",
            version="1",
            tiers=(TierCounter().add_all(turns).tier("core", "t.jsonl", "q.jsonl", 1),),
            root=str(one),
        ),
        one,
    )
    with pytest.raises(MemevalError, match="several haystacks"):
        pad(one, [10], source="haystacks", out=tmp_path / "p")
    with pytest.raises(MemevalError, match="not larger than the tier"):
        pad(one, [6], source="haystacks", out=tmp_path / "p")
    assert not (tmp_path / "p").exists()


def test_pad_cli(tmp_path, capsys):
    src = tmp_path / "src"
    make_bench(src)
    assert main(["pad", str(src), "--sizes", "16,20", "--seed", "1", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "all_pad16: 48 turns" in out and "all_pad20: 60 turns" in out
    assert main(["pad", str(src), "--sizes", "x", "--out", str(tmp_path / "p")]) == 1
    assert "--sizes" in capsys.readouterr().err


def test_pad_one_haystack_tier_with_lifelog(tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    turns = [
        Turn(
            i, 1 + (i - 1) // 2, "user" if i % 2 else "assistant", f"story line {i}", "2024-01-0%d" % (1 + (i - 1) // 2)
        )
        for i in range(1, 7)
    ]
    write_turns(one / "t.jsonl", turns)
    write_questions(
        one / "q.jsonl",
        [
            Question(
                id="Q1",
                axis="BASIC",
                question_en="?",
                gold_answer="line 3",
                evidence_turns=(3,),
                evidence_sessions=(2,),
            )
        ],
    )
    save_bench(
        Bench(
            name="one",
            version="1",
            tiers=(TierCounter().add_all(turns).tier("core", "t.jsonl", "q.jsonl", 1),),
            root=str(one),
        ),
        one,
    )
    pad(one, [40, 12], source="lifelog", seed=3, out=tmp_path / "p")
    bench = load_bench(tmp_path / "p")
    assert [t.n_turns for t in bench.tiers] == [6, 12, 40]
    for tier in bench.tiers[1:]:
        rows = read_turns(tmp_path / "p" / tier.turns_file)
        (q,) = read_questions(tmp_path / "p" / tier.questions_file)
        ev = rows[q.evidence_turns[0] - 1]
        assert (ev.text, ev.speaker, ev.date) == ("story line 3", "user", "2024-01-02")
        assert [t.text for t in rows if t.text.startswith("story line")] == [f"story line {i}" for i in range(1, 7)]
        assert [t.date for t in rows] == sorted(t.date for t in rows) and rows[-1].date <= "2024-01-03"
        assert all(t.haystack is None for t in rows)


def test_pad_glasshouse_tier_keeps_named_sets_and_images(tmp_path):
    from test_loaders_glasshouse import make_folder
    from memeval.bench.loaders.glasshouse import import_glasshouse

    import_glasshouse(make_folder(tmp_path / "gh"), tmp_path / "b")
    pad(tmp_path / "b", [12, 30], source="lifelog", seed=5, out=tmp_path / "p")
    bench = load_bench(tmp_path / "p")
    assert bench.tier_names == ("core", "core_pad12", "core_pad30")
    core = {t.turn_id: t for t in read_turns(tmp_path / "p" / "glasshouse_v0.1_core.jsonl")}
    core_qs = {q.id: q for q in read_questions(tmp_path / "p" / "questions_core.jsonl")}
    for tier in bench.tiers[1:]:
        assert set(tier.question_sets) == {"probes"}
        probes = read_questions(tmp_path / "p" / tier.question_sets["probes"])
        assert [q.id for q in probes] == ["P001", "P002"] and all(q.axis == "FALSE_MEMORY" for q in probes)
        turns = {t.turn_id: t for t in read_turns(tmp_path / "p" / tier.turns_file)}
        assert len(turns) == tier.n_turns == int(tier.name.split("pad")[1])
        for q in read_questions(tmp_path / "p" / tier.questions_file):
            (a,), (b,) = q.evidence_turns, core_qs[q.id].evidence_turns
            assert turns[a].text == core[b].text and turns[a].date == core[b].date
        imaged = [t for t in turns.values() if t.image]
        assert [(t.text, t.image) for t in imaged] == [(core[3].text, "img/img01.png")]
    assert (tmp_path / "p" / "img" / "img01.png").is_file()
    from memeval.audit import audit

    report = audit(tmp_path / "p")
    for check in (
        "manifest-hash",
        "manifest-consistent",
        "ids-unique",
        "dates-chronological",
        "evidence-resolves",
        "images-resolve",
        "tiers-nested",
        "story-identical",
    ):
        assert report.check(check).status == "pass", report.summary()
