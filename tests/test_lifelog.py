"""The built-in life-story generator (lifelog.md): determinism, nesting, axes, evidence, CLI."""

from __future__ import annotations

import json
import re
import shutil
import zlib
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from memeval.bench.io import load_bench, read_questions, read_turns
from memeval.bench.tokens import count_tokens
from memeval.bench.lifelog import filler_sessions, generate
from memeval.cli import main
from memeval.scoring.matching import contains

TIERS = ("core", "small", "medium", "full")
LANGS = ("es", "fr", "de", "pt", "it", "zh", "ja", "ko", "ru", "ar")
# The tiny preset as lifelog.md asks for it (written out here, not read from the code).
TINY_STORY_AXES = {
    "BASIC": 10,
    "PARAPHRASE": 5,
    "TEMPORAL": 5,
    "UPDATE": 3,
    "GATHER": 3,
    "RECONCILE": 3,
    "MULTI": 4,
    "IMPLICIT": 3,
    "CROSS": 4,
    "CONFLICT": 4,
    "STALE": 2,
    "CONTRADICT": 2,
    "ABSTAIN": 2,
    "FALSE_MEMORY": 3,
    "XLING_QUERY": 10,
}
TINY_SMALL_ONLY = {"IMAGE": 9, "XLING_STORE": 10}
TINY_TURNS = (96, 200, 280, 420)
TINY_SESSIONS = (8, 22, 28, 40)


# one xdist worker runs this module: the generated demo bench, built by a module fixture, is built once
pytestmark = pytest.mark.xdist_group("lifelog")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return generate("tiny", 7, tmp_path_factory.mktemp("tiny") / "bench")


@pytest.fixture(scope="module")
def tiers(tiny):
    return {t: (read_turns(tiny / f"turns_{t}.jsonl"), read_questions(tiny / f"questions_{t}.jsonl")) for t in TIERS}


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_the_same_bytes_and_another_seed_does_not(tiny, tmp_path):
    again = generate("tiny", 7, tmp_path / "again")
    a, b = _files(tiny), _files(again)
    assert sorted(a) == sorted(b)
    assert len([n for n in a if n.endswith(".png")]) == 3
    for name in a:
        assert a[name] == b[name], name
    other = _files(generate("tiny", 8, tmp_path / "other"))
    assert other["turns_core.jsonl"] != a["turns_core.jsonl"]
    assert other["questions_full.jsonl"] != a["questions_full.jsonl"]
    assert other["img/img01.png"] != a["img/img01.png"]


def test_manifest_names_tiers_counts_generator_and_hash(tiny, tiers):
    bench = load_bench(tiny)
    assert bench.name == "lifelog" and bench.tier_names == TIERS
    assert bench.generator["preset"] == "tiny" and bench.generator["seed"] == 7
    assert bench.tokenizer == "approx-v1" and bench.content_hash.startswith("sha256:")
    for t, want_turns, want_sessions in zip(bench.tiers, TINY_TURNS, TINY_SESSIONS):
        turns, qs = tiers[t.name]
        assert (t.n_turns, len(turns)) == (want_turns, want_turns)
        assert t.n_sessions == want_sessions == len({x.session_id for x in turns})
        assert t.n_questions == len(qs)
        assert t.n_tokens > 10 * t.n_turns
        assert t.n_tokens == sum(count_tokens(x.text) for x in turns)  # the manifest's count is the turns' own


def test_tiers_nest_and_story_turns_are_byte_identical(tiers):
    key = lambda t: (t.text, t.speaker, t.date, t.image)  # noqa: E731
    for lower, upper in zip(TIERS, TIERS[1:]):
        lo, up = tiers[lower][0], tiers[upper][0]
        it = iter(map(key, up))
        assert all(k in it for k in map(key, lo)), f"{lower} is not a subsequence of {upper}"
    core = [key(t) for t in tiers["core"][0]]
    for t in TIERS:
        turns = tiers[t][0]
        assert [x.turn_id for x in turns] == list(range(1, len(turns) + 1))
        dates = [x.date for x in turns]
        assert dates == sorted(dates)
        assert date.fromisoformat(dates[-1]) > date.fromisoformat(dates[0]).replace(
            year=date.fromisoformat(dates[0]).year + 1
        )
        present = set(map(key, turns))
        assert all(k in present for k in core)
    assert not any(t.image for t in tiers["core"][0])  # core is the story alone


def test_turn_fields_do_not_tell_story_from_filler(tiny):
    allowed = {"turn_id", "session_id", "speaker", "text", "date"}
    for line in (tiny / "turns_full.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        keys = set(obj)
        assert keys == allowed or keys == allowed | {"image", "image_no"}
        assert obj["speaker"] in ("user", "assistant")


def test_every_axis_is_present_with_the_tiny_counts(tiers):
    core = Counter(q.axis for q in tiers["core"][1])
    assert dict(core) == TINY_STORY_AXES
    for t in ("small", "medium", "full"):
        assert dict(Counter(q.axis for q in tiers[t][1])) == {**TINY_STORY_AXES, **TINY_SMALL_ONLY}
        assert len(set(Counter(q.axis for q in tiers[t][1]))) == 17
    ids = [q.id for q in tiers["full"][1]]
    assert len(ids) == len(set(ids))
    assert {q.id for q in tiers["core"][1]} <= set(ids)
    assert all(q.asked_at == "2026-11-16" for t in TIERS for q in tiers[t][1])


def _evidence_text(turns_by_id, q) -> str:
    return "\n".join(turns_by_id[i].text for i in q.evidence_turns)


def test_evidence_resolves_and_holds_the_gold_in_every_tier(tiers):
    for t in TIERS:
        turns, qs = tiers[t]
        by_id = {x.turn_id: x for x in turns}
        for q in qs:
            assert all(i in by_id for i in q.evidence_turns), (t, q.id)
            assert sorted({by_id[i].session_id for i in q.evidence_turns}) == list(q.evidence_sessions)
            if q.axis in ("ABSTAIN", "FALSE_MEMORY"):
                assert q.expect == "no_memory" and not q.evidence_turns
                continue
            assert q.evidence_turns, (t, q.id)
            if q.axis == "IMAGE":
                continue
            text = _evidence_text(by_id, q)
            if q.axis == "CONTRADICT":
                golds = [q.clash_a, q.clash_b]
            elif q.axis == "GATHER":
                golds = list(q.gold_parts)
            elif q.axis == "RECONCILE":
                golds = [q.side_a, q.side_b]
            elif q.axis == "CONFLICT":
                assert q.gold_answer.startswith("no, ")
                golds = [q.gold_answer[4:]]
            elif q.axis == "TEMPORAL":  # asked by occasion (generator 1.2): the listed alternative is written
                assert q.gold_alts and any(contains(text, g) for g in q.gold_alts), (t, q.id, q.gold_alts)
                golds = []
            else:
                golds = [q.gold_answer]
            for g in golds:
                assert g and contains(text, g), (t, q.id, g, text)


def test_evidence_turns_are_exactly_the_turns_holding_the_answer(tiers):
    """No turn outside a question's evidence holds its (new) value: filler never names story values."""
    turns, qs = tiers["full"]
    low = [x.text.lower() for x in turns]
    for q in qs:
        if q.axis in ("ABSTAIN", "FALSE_MEMORY", "IMAGE", "CONTRADICT", "TEMPORAL"):
            continue
        values = {"GATHER": list(q.gold_parts), "RECONCILE": [q.side_a, q.side_b], "CONFLICT": [q.gold_answer[4:]]}.get(
            q.axis, [q.gold_answer]
        )
        holders: set[int] = set()
        for v in values:
            probe = v.lower().split()[-1]
            holders |= {i + 1 for i, s in enumerate(low) if probe in s and contains(turns[i].text, v)}
        if q.axis in ("MULTI", "CROSS", "IMPLICIT"):  # the other evidence turn says who the person is
            # (IMPLICIT, generator 1.2: the dinner or trip turn names the guests by first name only)
            assert holders and holders < set(q.evidence_turns), (q.id, sorted(holders), q.evidence_turns)
        else:
            assert holders == set(q.evidence_turns), (q.id, q.axis, values, sorted(holders), q.evidence_turns)


def test_axes_are_planted_as_lifelog_md_says(tiers):
    turns, qs = tiers["full"]
    by_id = {x.turn_id: x for x in turns}
    sess_date = {x.session_id: date.fromisoformat(x.date) for x in turns}
    by_qid = {q.id: q for q in qs}
    kinds = Counter()
    for q in qs:
        ev = [by_id[i] for i in q.evidence_turns]
        if q.axis == "STALE":
            new = ev[0]
            old_holders = [x for x in turns if contains(x.text, q.stale_answer) and x.turn_id < new.turn_id]
            assert len({x.session_id for x in old_holders}) >= 3  # the old value, prominently and repeatedly
            assert len(new.text.split()) >= 45  # the new value once, in passing, inside a long turn
            q_words = {w for w in re.findall(r"[a-z]{4,}", q.question_en.lower())}
            t_words = set(re.findall(r"[a-z]{4,}", new.text.lower()))
            name_words = {w.lower() for w in re.findall(r"\b[A-Z][a-z]+", q.question_en)}
            assert len(q_words & t_words - name_words) <= 1, (q.question_en, new.text)
        elif q.axis in ("UPDATE", "STALE"):
            assert q.stale_answer and q.stale_answer != q.gold_answer
        if q.axis == "UPDATE":
            first_old = min(x.turn_id for x in turns if contains(x.text, q.stale_answer))
            assert first_old < ev[0].turn_id  # the old value came first, then the new one
        if q.axis == "CONTRADICT":
            a, b = ev
            assert a.session_id != b.session_id
            assert (sess_date[b.session_id] - sess_date[a.session_id]).days >= 21
            assert not any(contains(x.text, q.clash_a) and contains(x.text, q.clash_b) for x in turns)
        if q.axis == "RECONCILE":
            assert len({x.session_id for x in ev}) == 2
            assert not any(contains(x.text, q.side_a) and contains(x.text, q.side_b) for x in turns)
        if q.axis == "GATHER":
            assert len(q.gold_parts) == 2 and len({x.session_id for x in ev}) == 2
        if q.axis in ("MULTI", "CROSS", "IMPLICIT", "TEMPORAL"):
            assert len({x.session_id for x in ev}) == 2
        if q.axis == "FALSE_MEMORY":
            kinds[q.kind] += 1
            assert q.false_claim_en and q.false_claim_en in q.question_en
            assert (q.source_fact is None) == (q.kind == "ghost")
        if q.axis == "XLING_QUERY":
            assert q.query_lang in LANGS and q.store_lang == "en"
            assert q.question and q.question != q.question_en and q.text_to_ask == q.question
            src = by_qid[q.source_id]
            assert src.axis in ("BASIC", "PARAPHRASE") and src.gold_answer == q.gold_answer
        if q.axis == "XLING_STORE":
            assert q.store_lang in LANGS and q.query_lang == "en" and q.question_en.isascii()
            assert not ev[0].text.isascii() or q.store_lang in ("es", "fr", "de", "pt", "it")
        if q.axis == "IMAGE":
            photo = ev[0]
            assert photo.image and photo.image_no and photo.caption is None
            assert f"the photo from {photo.date}" in q.question_en and "when" not in q.question_en.lower()
            assert not any(w in photo.text.lower() for w in q.gold_answer.split())
    assert set(kinds) == {"swap", "invert", "ghost"}
    assert {q.store_lang for q in qs if q.axis == "XLING_STORE"} == set(LANGS)
    assert {q.query_lang for q in qs if q.axis == "XLING_QUERY"} == set(LANGS)


def test_photos_are_real_pngs_with_the_asked_colours(tiny, tiers):
    from memeval.bench.lifelog.photos import COLOURS

    turns, qs = tiers["full"]
    by_id = {x.turn_id: x for x in turns}
    photo_dates = [x.date for x in turns if x.image]
    assert len(photo_dates) == len(set(photo_dates)) == 3  # a date names one photo
    for q in qs:
        if q.axis != "IMAGE":
            continue
        path = tiny / by_id[q.evidence_turns[0]].image
        with Image.open(path) as img:
            assert img.format == "PNG" and img.size == (480, 320)
            colours = {c for _, c in img.convert("RGB").getcolors(1 << 16)}
        colour = q.gold_answer.split()[0]
        assert COLOURS[colour] in colours, (q.id, q.gold_answer)


def test_audit_passes_on_tiny(tiny):
    from memeval import audit

    report = audit.audit(tiny)
    assert report.passed, report.summary()


def test_filler_sessions_api():
    dates = ["2026-01-05", "2026-02-10", "2026-03-01"]
    a = filler_sessions(90, 5, dates, start_turn_id=11, start_session_id=4)
    b = filler_sessions(90, 5, dates, start_turn_id=11, start_session_id=4)
    assert a == b
    assert [s.session_id for s in a] == [4, 5, 6] and [s.date for s in a] == dates
    ids = [t.turn_id for s in a for t in s.turns]
    assert ids == list(range(11, 101))
    for s in a:
        assert [t.speaker for t in s.turns][:2] == ["user", "assistant"]
        assert all(t.date == s.date and t.session_id == s.session_id for t in s.turns)
    assert filler_sessions(90, 6, dates) != filler_sessions(90, 5, dates)
    from memeval.bench.lifelog.data import load

    story = load("values")["story"]
    names = set(story["first"]) | set(story["last"]) | set(story["pet"])
    words = {
        w.strip(".,?!'") for s in filler_sessions(3000, 1, ["2026-01-01"] * 40) for t in s.turns for w in t.text.split()
    }
    assert not (words & names)


def test_cli_refuses_a_foreign_folder_and_replaces_a_previous_generation(tmp_path, capsys):
    out = tmp_path / "b"
    assert main(["generate", "--preset", "tiny", "--seed", "1", "--out", str(out)]) == 0
    first = (out / "turns_full.jsonl").read_bytes()
    assert main(["generate", "--preset", "tiny", "--seed", "2", "--out", str(out)]) == 0  # a previous generation
    assert (out / "turns_full.jsonl").read_bytes() != first
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    capsys.readouterr()
    assert main(["generate", "--preset", "tiny", "--out", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert "mine" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    assert main(["generate", "--preset", "tiny", "--out", str(foreign), "--force"]) == 0
    assert (foreign / "bench.yaml").is_file() and not (foreign / "notes.txt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folders left


# The demo preset as written in lifelog.md's spirit: four tiers, the largest 10-20k turns, every axis.
DEMO_TURNS = (720, 2400, 4800, 14400)
DEMO_SESSIONS = (36, 110, 160, 420)
DEMO_AXES = {
    "BASIC": 80,
    "PARAPHRASE": 40,
    "TEMPORAL": 30,
    "UPDATE": 28,
    "GATHER": 24,
    "RECONCILE": 18,
    "MULTI": 30,
    "IMPLICIT": 18,
    "CROSS": 26,
    "CONFLICT": 20,
    "STALE": 22,
    "CONTRADICT": 14,
    "ABSTAIN": 14,
    "FALSE_MEMORY": 15,
    "XLING_QUERY": 120,
    "IMAGE": 150,
    "XLING_STORE": 60,
}


def test_demo_counts(demo1_bench):
    out = demo1_bench  # the session's demo bench, seed 1 (seed 3, read here before, gives the same counts)
    bench = load_bench(out)
    assert [t.n_turns for t in bench.tiers] == list(DEMO_TURNS)
    assert [t.n_sessions for t in bench.tiers] == list(DEMO_SESSIONS)
    qs = read_questions(out / "questions_full.jsonl")
    assert dict(Counter(q.axis for q in qs)) == DEMO_AXES
    core = Counter(q.axis for q in read_questions(out / "questions_core.jsonl"))
    assert "IMAGE" not in core and "XLING_STORE" not in core and len(core) == 15
    assert len(list((out / "img").glob("img*.png"))) == 50
    turns = read_turns(out / "turns_full.jsonl")
    assert sum(1 for t in turns if t.image) == 50
    assert len({q.store_lang for q in qs if q.axis == "XLING_STORE"}) == 10


def test_png_writer_round_trips_through_pillow():
    import io
    import random

    from memeval.bench.lifelog.png import encode_png

    rng = random.Random(0)
    for w, h in ((7, 5), (480, 320), (33, 1), (1, 40), (300, 3)):
        for flat in (False, True):
            data = bytes(7 if flat else rng.choice((0, 0, 0, 5, 255, rng.randrange(256))) for _ in range(w * h * 3))
            png = encode_png(Image.frombytes("RGB", (w, h), data))
            with Image.open(io.BytesIO(png)) as img:
                img.load()
                assert (img.format, img.mode, img.size) == ("PNG", "RGB", (w, h))
                assert img.tobytes() == data


def _reference_deflate(data: bytes) -> bytes:
    """The deflate stream png.py documents, token by token as a string of bits (slow and plain): a
    literal per run, 258-byte distance-1 copies while more than 258 bytes are left, then one copy
    of the rest (3..258) or 1-2 literals; fixed Huffman codes (RFC 1951 3.2.6), LSB first."""
    import itertools

    def code(sym: int) -> str:  # the fixed code: Huffman codes go most significant bit first
        c, n = (
            (0x30 + sym, 8)
            if sym < 144
            else (0x190 + sym - 144, 9)
            if sym < 256
            else (sym - 256, 7)
            if sym < 280
            else (0xC0 + sym - 280, 8)
        )
        return format(c, f"0{n}b")

    bases = [
        int(b) for b in "3 4 5 6 7 8 9 10 11 13 15 17 19 23 27 31 35 43 51 59 67 83 99 115 131 163 195 227 258".split()
    ]
    extras = [0] * 8 + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [0]

    def copy(k: int) -> str:
        i = max(j for j, b in enumerate(bases) if b <= k)
        extra = format(k - bases[i], f"0{extras[i]}b")[::-1] if extras[i] else ""  # extra bits: LSB first
        return code(257 + i) + extra + "00000"  # distance code 0 (distance 1)

    out = "110"  # BFINAL=1, then BTYPE=01 LSB first
    for value, group in itertools.groupby(data):
        run = len(list(group)) - 1
        out += code(value)
        while run > 258:
            out, run = out + copy(258), run - 258
        out += copy(run) if run >= 3 else code(value) * run
    out += code(256)
    out += "0" * (-len(out) % 8)
    return bytes(int(out[i : i + 8][::-1], 2) for i in range(0, len(out), 8))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 255),
            st.sampled_from([1, 2, 3, 4, 5, 257, 258, 259, 260, 261, 262, 516, 517, 518, 519, 1000]),
        ),
        max_size=8,
    )
)
def test_png_deflate_is_the_documented_token_stream(runs):
    """png.py's vectorised deflate against a plain token-by-token one, on run lengths at every edge
    of the copy rules: the same bytes (a bench's images are part of its content hash)."""
    from memeval.bench.lifelog.png import _deflate

    data = b"".join(bytes([v]) * n for v, n in runs)
    assert _deflate(data) == _reference_deflate(data)
    assert zlib.decompress(_deflate(data), wbits=-15) == data


def test_png_deflate_of_drawn_scenes_is_the_documented_token_stream(tmp_path):
    import random

    from memeval.bench.lifelog.photos import draw_scene, make_scenes

    for i, scene in enumerate(make_scenes(4, random.Random(3))):
        draw_scene(scene, tmp_path / f"{i}.png")
        with Image.open(tmp_path / f"{i}.png") as img:
            img.load()
            png = (tmp_path / f"{i}.png").read_bytes()
        idat = png[png.index(b"IDAT") + 4 : png.index(b"IEND") - 8]  # zlib stream: header, deflate, adler32
        raw = zlib.decompress(idat)
        assert idat[2:-4] == _reference_deflate(raw)


def test_story_values_never_appear_in_template_text():
    """A planted value (pet, town, company, ...) that also occurred in fixed template text would be
    'held' by turns outside its evidence; the vocabularies are kept apart."""
    import glob

    import yaml

    from memeval.bench.lifelog.data import load

    texts: list[str] = []

    def walk(x):
        if isinstance(x, str):
            texts.append(x)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
        elif isinstance(x, list):
            for y in x:
                walk(y)

    data = Path(__file__).resolve().parent.parent / "memeval" / "bench" / "lifelog" / "data"
    for f in sorted(glob.glob(str(data / "*.yaml")) + glob.glob(str(data / "lang" / "*.yaml"))):
        if not f.endswith("values.yaml"):
            walk(yaml.safe_load(Path(f).read_text(encoding="utf-8")))
    v = load("values")
    walk(v["filler"])
    blob = "\n".join(texts)
    s = v["story"]
    combos = {
        "{} {}": [
            ("venue_head", "venue_tail"),
            ("company_head", "company_tail"),
            ("film_noun", "film_tail"),
            ("car_colour", "car_model"),
            ("street_head", "street_tail"),
        ],
        "The {} {}": [("band_adj", "band_noun"), ("book_adj", "book_noun")],
        "{}{}": [("town_head", "town_tail")],
    }
    values = [fmt.format(x, y) for fmt, pairs in combos.items() for a, b in pairs for x in s[a] for y in s[b]]
    values += s["pet"] + s["first"] + s["last"]
    low = blob.lower()
    candidates = [w for w in values if max(w.lower().split(), key=len)[:-1] in low]  # a cheap superset first
    from memeval.text.containment import contains_normalized
    from memeval.text.normal_form import normalize

    held = normalize(blob)  # `contains(blob, w)` for each w, with the long blob normalised once, not per value
    assert [w for w in candidates if contains_normalized(held, w)] == []
    assert not set(s["first"]) & set(v["filler"]["people"])
    assert not set(s["last"]) & set(v["filler"]["last"])


def test_output_does_not_depend_on_the_hash_seed(tmp_path):
    import os
    import subprocess
    import sys

    outs = []
    for hs in ("1", "2"):
        out = tmp_path / f"h{hs}"
        env = {**os.environ, "PYTHONHASHSEED": hs}
        subprocess.run(
            [sys.executable, "-m", "memeval", "generate", "--preset", "tiny", "--seed", "5", "--out", str(out)],
            check=True,
            env=env,
            capture_output=True,
        )
        outs.append(_files(out))
    assert outs[0] == outs[1]


def test_cli_unwritable_output_is_one_line_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["generate", "--preset", "tiny", "--out", str(blocker / "bench")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "a-file" in err and "Traceback" not in err
    assert main(["generate", "--preset", "tiny", "--out", str(blocker)]) == 2  # a file, not a folder
    assert blocker.read_text() == "x"


def test_probes_are_their_own_question_set_in_every_tier(tiny):
    bench = load_bench(tiny)
    main_ids: set[str] = set()
    for t in bench.tiers:
        assert dict(t.question_sets) == {"probes": f"probes_{t.name}.jsonl"}
        main = read_questions(tiny / t.questions_file)
        main_ids |= {q.id for q in main}
        assert Counter(q.axis for q in main)["FALSE_MEMORY"] == 3  # a modest number stays in the main set
        probes = read_questions(tiny / t.question_sets["probes"])
        assert Counter(q.kind for q in probes) == {"swap": 3, "invert": 3, "ghost": 3}
        assert all(q.axis == "FALSE_MEMORY" and q.expect == "no_memory" and not q.evidence_turns for q in probes)
        assert [q.to_dict() for q in probes] == [q.to_dict() for q in read_questions(tiny / "probes_core.jsonl")]
    assert not main_ids & {q.id for q in probes}
    # a swap/invert probe names a person the story really talks about; a ghost's person never occurs
    core_text = "\n".join(x.text for x in read_turns(tiny / "turns_core.jsonl"))
    full_text = "\n".join(x.text for x in read_turns(tiny / "turns_full.jsonl"))
    for q in probes:
        person = " ".join(re.findall(r"\b[A-Z][a-z]+\b", q.false_claim_en)[:2])
        if q.kind == "ghost":
            assert q.source_fact is None and not q.need
            assert not re.search(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b", q.false_claim_en) or person not in full_text
        else:
            assert q.source_fact and q.need == (q.source_fact,)
            assert person in core_text, (q.id, q.false_claim_en)


# ---------------------------------------------------------------------------------------------
# Saturation: near-miss filler about the story's cast makes retrieval degrade with haystack size.


@pytest.fixture(scope="module")
def demo1(demo1_bench, tmp_path_factory) -> Path:
    """A copy of the session's demo seed-1 bench (``demo1_bench``): the runs below write into the bench folder."""
    return Path(shutil.copytree(demo1_bench, tmp_path_factory.mktemp("demo1") / "bench"))


def _core_means(run_dir) -> dict[str, tuple[float, float]]:
    from memeval.analysis.aggregate import load_records, overall_table, question_set

    t = overall_table(question_set(load_records(run_dir), "core"))
    return {r["tier"]: (r["weighted"], r["unweighted"]) for r in t.iter_rows(named=True)}


def test_bm25_degrades_tier_by_tier_on_demo_while_the_oracle_holds(demo1, tmp_path):
    from memeval.analysis.aggregate import load_records, tier_axis_table
    from memeval.bench.axes import ANSWERABLE_AXES
    from memeval.run import run_system

    bm25 = _core_means(run_system(demo1, "bm25", out=tmp_path / "bm25", progress=False))
    for i in (0, 1):  # weighted, unweighted
        curve = [bm25[t][i] for t in TIERS]
        assert all(a > b for a, b in zip(curve, curve[1:])), (i, curve)
        assert curve[0] - curve[-1] >= 0.1, (i, curve)
    oracle = tier_axis_table(load_records(run_system(demo1, "oracle", out=tmp_path / "oracle", progress=False)))
    text_axes = [r for r in oracle.iter_rows(named=True) if r["axis"] in ANSWERABLE_AXES and r["axis"] != "IMAGE"]
    assert {r["tier"] for r in text_axes} == set(TIERS) and len({r["axis"] for r in text_axes}) == 13
    assert all(r["score"] >= 0.9 for r in text_axes), [(r["tier"], r["axis"], r["score"]) for r in text_axes]


def test_cast_names_recur_in_filler_more_in_bigger_tiers_and_hold_no_answer(demo1):
    qs = read_questions(demo1 / "questions_full.jsonl")
    # questions name people indirectly (generator 1.2): the cast is read from the BASIC evidence turns
    core = {t.turn_id: t.text for t in read_turns(demo1 / "turns_core.jsonl")}
    cq = {q.id: q for q in read_questions(demo1 / "questions_core.jsonl")}
    people = sorted(
        {
            m
            for q in cq.values()
            if q.axis == "BASIC"
            for i in q.evidence_turns
            for m in re.findall(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b", core[i])
            if m.split()[0] in q.question_en
        }
    )
    assert len(people) >= 60
    mentions = []
    for t in TIERS:
        text = (demo1 / f"turns_{t}.jsonl").read_text(encoding="utf-8")
        mentions.append(sum(text.count(p) for p in people))
    assert all(a < b for a, b in zip(mentions, mentions[1:])), mentions
    assert mentions[-1] > 3 * mentions[0]
    # the new near-miss turns never hold an answer: each value is held by its evidence turns only
    turns = read_turns(demo1 / "turns_full.jsonl")
    low = [x.text.lower() for x in turns]
    for q in qs:
        if q.axis in ("ABSTAIN", "FALSE_MEMORY", "IMAGE", "CONTRADICT", "TEMPORAL", "MULTI", "CROSS"):
            continue
        values = {"GATHER": list(q.gold_parts), "RECONCILE": [q.side_a, q.side_b], "CONFLICT": [q.gold_answer[4:]]}.get(
            q.axis, [q.gold_answer]
        )
        for v in values:
            probe = v.lower().split()[-1]
            holders = {i + 1 for i, s in enumerate(low) if probe in s and contains(turns[i].text, v)}
            assert holders <= set(q.evidence_turns), (q.id, v, sorted(holders - set(q.evidence_turns))[:3])


def test_near_miss_lines_use_filler_values_and_a_gold_named_person_is_never_written():
    import random

    from memeval.bench.lifelog.filler import NearMiss
    from memeval.bench.lifelog.story import Hook

    hooks = [
        Hook("Ines Kohler", None, "car"),
        Hook(None, "the lead on the Halcyon Alpha project", "pet", (("animal", "ferret"),)),
    ]
    near = NearMiss(hooks, golds=["teal Corolla", "Biscuit"])
    rng = random.Random(3)
    lines = [near.line(rng) for _ in range(300)]
    cars = (
        "an old Beetle",
        "a Land Rover",
        "a Transit van",
        "an electric Mini",
        "a Volvo estate",
        "a camper van",
        "a rusty pickup",
    )
    car_lines = [t for t, name in lines if name == "Ines Kohler" and "Ines Kohler's " in t]
    assert car_lines and all(any(c in t for c in cars) for t in car_lines)
    assert any(t.startswith("The lead on the Halcyon Alpha project") and "ferret" in t for t, _ in lines)
    assert any(t.startswith(("Bumped into Ines Kohler", "Saw Ines Kohler", "Ines Kohler sent")) for t, _ in lines)
    assert all(near.safe(t, [n] if n else []) for t, n in lines)
    # a gold that is the person's name: every line naming them is unsafe (and so never written)
    guarded = NearMiss(hooks, golds=["Ines Kohler"])
    named = [(t, n) for t, n in (guarded.line(rng) for _ in range(100)) if n]
    assert named and not any(guarded.safe(t, [n]) for t, n in named)
    assert guarded.safe("The lead on the Halcyon Alpha project has a ferret called Rex.", [])


def test_story_pet_names_are_no_other_story_value_word():
    """A pet name that is also a dish (gumbo) would turn up outside its evidence turns."""
    import re as _re

    from memeval.bench.lifelog.data import load

    v = load("values")["story"]
    words = {w.lower() for k, pool in v.items() if k != "pet" for x in pool for w in _re.findall(r"[A-Za-z]+", str(x))}
    assert not [p for p in v["pet"] if p.lower() in words]


def test_questions_refer_indirectly_and_share_few_words_with_their_evidence(tiers):
    """Issue 13: on the answerable text axes, questions share about as few content words with their
    evidence as glasshouse's (0.376) and rarely spell out a person's full name."""
    from memeval.audit.difficulty import TEXT_AXES, overlap

    turns, qs = tiers["full"]
    by_id = {x.turn_id: x.text for x in turns}
    text = [q for q in qs if q.axis in TEXT_AXES]
    ov = [overlap(q.question_en, [by_id[i] for i in q.evidence_turns]) for q in text]
    assert 0.2 < sum(ov) / len(ov) < 0.5, sum(ov) / len(ov)
    full_names = [q for q in text if re.search(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b", q.question_en)]
    assert len(full_names) < 0.25 * len(text), [q.question_en for q in full_names[:5]]


def test_reader_sample_shows_random_story_exchanges_and_questions(tiny):
    from memeval.bench.lifelog.sample import sample_markdown

    md = sample_markdown(tiny, 20, seed=3)
    assert md == sample_markdown(tiny, 20, seed=3)  # reproducible
    assert md.count(", user**") == 20 and md.count("**assistant**") == 20
    rows = [line for line in md.splitlines() if line.startswith("| Q")]
    assert len(rows) == 20
    users = {x.text for x in read_turns(tiny / "turns_core.jsonl") if x.speaker == "user"}
    quoted = [line[2:] for line in md.splitlines() if line.startswith("> ")]
    assert sum(q in users for q in quoted) == 20


def test_audit_reports_difficulty_per_tier_beside_glasshouse(demo1):
    from memeval.audit import audit

    rep = audit(demo1, tiers=["core", "full"])
    c = rep.check("difficulty")
    assert c.status == "report"  # measured, never a PASS
    gh = c.numbers["glasshouse_core"]  # measured on the shared files, or said to be missing
    assert isinstance(gh, str) and gh.startswith("not available") or gh["n_bm25"] == 605
    core, full = c.numbers["core"], c.numbers["full"]
    # issue 13's "done when" on this seed: overlap and the core BM25 probe near glasshouse's (its
    # issue's figures: 0.376 overlap, 0.346 for glasshouse's own BM25 run under its score.py)
    assert abs(core["overlap"] - 0.376) <= 0.06 and abs(core["bm25_top10"] - 0.346) <= 0.06, core
    assert full["bm25_top10"] < core["bm25_top10"] - 0.1  # more filler, harder retrieval
    assert full["overlap"] == core["overlap"]  # the same story questions and evidence
    assert any(line.strip().startswith("REPORT difficulty") for line in rep.lines())
