"""Images reach systems and readers: a turn's image travels into ``ingest`` (a bench path, or its bytes
as a ``data:`` URL), comes back on returned memories, and an answer-mode reader marked as accepting
images receives it as an OpenAI image content part (the request the stub reader got is inspected)."""

import base64
import json
from pathlib import Path

import pytest

from memeval.bench import lifelog
from memeval.bench.images import image_data_url, inline_session
from memeval.bench.model import Session, Turn
from memeval.errors import InputError
from memeval.llm import ChatClient
from memeval.run import read_records, run_system
from memeval.scoring.judge import Judge, Reader
from memeval.systems.base import Capabilities, Memory, memory_from_json, memory_to_json
from memeval.systems.baselines import Recent
from memeval.systems.http import parse_query_reply
from memeval.systems.server import ReferenceServer
from memeval.testing.chat_stub import ScriptedChatServer

TIER = "small"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return Path(lifelog.generate("tiny", 1, tmp_path_factory.mktemp("gen") / "tiny"))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _image_questions(bench: Path) -> dict[str, bytes]:
    """IMAGE question text -> the bytes of its evidence photo, read straight from the bench files."""
    turns = {t["turn_id"]: t for t in _jsonl(bench / f"turns_{TIER}.jsonl")}
    out = {}
    for q in _jsonl(bench / f"questions_{TIER}.jsonl"):
        if q["axis"] == "IMAGE":
            (tid,) = q["evidence_turns"]
            out[q["question_en"]] = (bench / turns[tid]["image"]).read_bytes()
    return out


def _is_reader(body) -> bool:
    content = body["messages"][0]["content"]
    text = content if isinstance(content, str) else content[0]["text"]
    return text.startswith("You answer a question")


def _question_of(body) -> str:
    content = body["messages"][0]["content"]
    text = content if isinstance(content, str) else content[0]["text"]
    return text.split("Question:")[-1].split("\n")[0].strip()


def _images_of(body) -> list[bytes]:
    content = body["messages"][0]["content"]
    if isinstance(content, str):
        return []
    out = []
    for part in content:
        if part["type"] == "image_url":
            head, _, data = part["image_url"]["url"].partition(",")
            assert head == "data:image/png;base64"
            out.append(base64.b64decode(data))
    return out


def _stub(body):
    if _is_reader(body):
        return "I see a picture." if _images_of(body) else "It was never mentioned."
    return json.dumps({"verdict": "wrong", "evidence": "stub judge"})


def _answer_run(bench, system, out, images: bool, **kw):
    with ScriptedChatServer(_stub) as srv:
        client = ChatClient(srv.base_url, "vision-m", backoff=0.001)
        rd = run_system(
            bench,
            system,
            tiers=[TIER],
            mode="answer",
            judge=Judge(client),
            reader=Reader(client, images=images),
            out=out,
            progress=False,
            **kw,
        )
    return rd, [b for b in srv.requests if _is_reader(b)]


def test_tiny_image_questions_send_the_photo_to_a_reader_that_accepts_images(tiny, tmp_path):
    photos = _image_questions(tiny)
    assert len(photos) >= 3
    rd, asked = _answer_run(tiny, "oracle", tmp_path / "r", images=True)
    by_question = {_question_of(b): b for b in asked}
    for question, photo in photos.items():
        body = by_question[question]
        assert _images_of(body) == [photo]  # the evidence turn's own file, byte for byte
        assert "[image 1]" in body["messages"][0]["content"][0]["text"]
    recs = [r for r in read_records(rd) if r["axis"] == "IMAGE"]
    assert len(recs) == len(photos)
    assert all(r["images_sent"] == 1 and r["images_note"] == "1 image sent to the reader" for r in recs)
    assert all(r["answer"] == "I see a picture." for r in recs)
    assert all(m["image"].startswith("img/") for r in recs for m in r["memories"])  # a path, never bytes
    text_only = [b for q, b in by_question.items() if q not in photos]
    assert text_only and all(isinstance(b["messages"][0]["content"], str) for b in text_only)
    from memeval.analysis.runs import headline_lines

    assert not any("images:" in line for line in headline_lines(rd))
    others = [r for r in read_records(rd) if r["axis"] != "IMAGE"]
    assert all(r["images_sent"] is None and r["images_note"] is None for r in others)


def test_a_reader_not_marked_for_images_gets_text_and_the_record_says_so(tiny, tmp_path):
    photos = _image_questions(tiny)
    rd, asked = _answer_run(tiny, "oracle", tmp_path / "r", images=False)
    assert all(isinstance(b["messages"][0]["content"], str) for b in asked)
    recs = [r for r in read_records(rd) if r["axis"] == "IMAGE"]
    assert len(recs) == len(photos)
    for r in recs:
        assert r["images_sent"] == 0 and "not marked as accepting images" in r["images_note"]
        assert r["answer"] == "It was never mentioned."
    from memeval.analysis.runs import headline_lines

    n = len(photos)
    assert f"  images: the reader saw none of the images for {n} of {n} questions" in "\n".join(headline_lines(rd))


def test_http_system_ingests_image_bytes_and_returns_image_memories(tiny, tmp_path):
    photos = set(_image_questions(tiny).values())
    system = Recent(tokens=10**6)  # every turn comes back, photos included
    with ReferenceServer(system) as srv:
        rd, asked = _answer_run(
            tiny, srv.url, tmp_path / "r", images=True, http_options={"images": "inline"}, name="recent-http"
        )
    stored = [t.image for t, _n in system._turns if t.image]
    assert stored and all(i.startswith("data:image/png;base64,") for i in stored)  # bytes went over the wire
    assert {base64.b64decode(i.partition(",")[2]) for i in stored} == photos
    assert asked and all(set(_images_of(b)) == photos for b in asked)
    recs = read_records(rd)
    images = [m["image"] for r in recs for m in r["memories"] if "image" in m]
    assert images and all(i.startswith("data:image/png;sha256=") for i in images)  # digest, not the bytes
    assert all(r["images_sent"] == len(photos) for r in recs)


def test_memory_image_over_the_protocol():
    m = memory_from_json({"text": "my bike", "speaker": "user", "image": "img/img01.png"})
    assert (m.content, m.image, str(m)) == ("my bike", "img/img01.png", "user: my bike")
    assert memory_to_json(Memory("x", image="data:image/png;base64,AA==")) == {
        "text": "x",
        "image": "data:image/png;base64,AA==",
    }
    memories, _, _ = parse_query_reply(b'{"memories": [{"text": "a", "image": "img/a.png"}, "b"]}')
    assert memories[0].image == "img/a.png" and memories[1] == "b"
    with pytest.raises(ValueError, match=r"memories\[0\]\.image"):
        parse_query_reply(b'{"memories": [{"text": "a", "image": 3}]}')


def test_image_paths_from_data_never_leave_the_bench(tmp_path):
    bench = tmp_path / "bench"
    (bench / "img").mkdir(parents=True)
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    (bench / "img" / "a.png").write_bytes(png)
    (tmp_path / "secret.png").write_bytes(png)
    (bench / "img" / "link.png").symlink_to(tmp_path / "secret.png")
    (bench / "img" / "notes.png").write_bytes(b"not an image")
    assert base64.b64decode(image_data_url(bench, "img/a.png").partition(",")[2]) == png
    for ref, why in [
        ("../secret.png", "leaves the bench folder"),
        (str(tmp_path / "secret.png"), "leaves the bench folder"),
        ("img/link.png", "leaves the bench folder"),
        ("img/missing.png", "is not a file"),
        ("img/notes.png", "is not a PNG"),
        ("https://example.org/a.png", "fetches nothing"),
        ("data:image/png;base64," + base64.b64encode(b"text").decode(), "does not hold"),
    ]:
        with pytest.raises(ValueError, match=why):
            image_data_url(bench, ref)
    s = Session(1, "2026-01-01", (Turn(7, 1, "user", "look", "2026-01-01", image="../secret.png"),))
    with pytest.raises(InputError, match=r"turn_id 7: field 'image'.*leaves the bench folder"):
        inline_session(s, bench, "turns_x.jsonl")


def test_reader_is_not_shown_an_image_outside_the_bench(tmp_path):
    from memeval.scoring.reader_images import reader_images

    bench = tmp_path / "bench"
    bench.mkdir()
    (tmp_path / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\1" * 8)
    imgs = reader_images([Memory("look", image="../secret.png"), Memory("also", image="img/none.png")], bench, True)
    assert imgs.urls == () and imgs.sent == 0 and imgs.marks == (None, None)
    assert imgs.note == "0 images sent to the reader; 2 not sent (image ../secret.png leaves the bench folder)"


def test_regrade_in_answer_mode_shows_the_reader_the_recorded_image_paths(tiny, tmp_path):
    from memeval.run.regrade import regrade_run

    photos = _image_questions(tiny)
    src = run_system(tiny, "oracle", tiers=[TIER], out=tmp_path / "dry", progress=False)
    with ScriptedChatServer(_stub) as srv:
        client = ChatClient(srv.base_url, "vision-m", backoff=0.001)
        rd = regrade_run(src, "answer", judge=Judge(client), reader=Reader(client, images=True), out=tmp_path / "re")
    by_question = {_question_of(b): b for b in srv.requests if _is_reader(b)}
    assert all(_images_of(by_question[q]) == [photo] for q, photo in photos.items())
    assert sum(r["images_sent"] == 1 for r in read_records(rd)) == len(photos)


def test_an_in_process_system_asking_for_bytes_gets_data_urls(tiny, tmp_path, monkeypatch):
    photos = set(_image_questions(tiny).values())
    seen = []
    real_ingest = Recent.ingest

    def ingest(self, session):
        seen.extend(t.image for t in session.turns if t.image)
        real_ingest(self, session)

    monkeypatch.setattr(Recent, "capabilities", Capabilities(image_input="inline"))
    monkeypatch.setattr(Recent, "ingest", ingest)
    run_system(tiny, "recent", tiers=[TIER], out=tmp_path / "r", progress=False)
    assert seen and {base64.b64decode(i.partition(",")[2]) for i in seen} == photos


def test_cli_reader_images_flag(tiny, tmp_path, capsys):
    from memeval.cli import main
    from memeval.run import read_manifest

    photos = _image_questions(tiny)
    with ScriptedChatServer(_stub) as srv:
        url = srv.base_url
        common = ["--judge-url", url, "--judge-model", "j", "--reader-url", url, "--reader-model", "r"]
        args = ["run", "--bench", str(tiny), "--system", "oracle", "--tiers", TIER, "--mode", "answer", *common]
        assert main([*args, "--reader-images", "--no-progress", "--out", str(tmp_path / "r")]) == 0
    shown = [b for b in srv.requests if _is_reader(b) and _images_of(b)]
    assert sorted(map(_images_of, shown)) == sorted([p] for p in photos.values())
    assert read_manifest(tmp_path / "r")["config"]["grader"]["reader"]["images"] is True
