"""LoCoMo loader: small files in the real shape, written here (never downloaded)."""

import json

import pytest
import yaml

from memeval.bench import load_bench, read_questions, read_turns
from memeval.bench.loaders.locomo import import_locomo
from memeval.cli import main
from memeval.errors import InputError


def _conv(sample_id, a="Caroline", b="Melanie"):
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": a,
            "speaker_b": b,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": a, "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                {
                    "speaker": b,
                    "dia_id": "D1:2",
                    "text": "That's great! Look at this.",
                    "img_url": ["https://example.org/a.jpg"],
                    "blip_caption": "a photo of a lake",
                },
                {"speaker": a, "dia_id": "D1:3", "text": "Lovely lake."},
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [
                {"speaker": b, "dia_id": "D2:1", "text": "I ran a charity race for mental health."},
                {"speaker": a, "dia_id": "D2:2", "text": "Proud of you!"},
            ],
            "session_3_date_time": "8:00 pm on 1 July, 2023",
            "session_3": [],
        },
        "qa": [
            {
                "question": "When did Caroline go to the support group?",
                "answer": "7 May 2023",
                "evidence": ["D1:1"],
                "category": 2,
            },
            {
                "question": "What did the race raise awareness for?",
                "answer": "mental health",
                "evidence": ["D2:1"],
                "category": 4,
            },
            {
                "question": "What did Melanie share and do?",
                "answer": "a lake photo; a race",
                "evidence": ["D1:2; D2:1"],
                "category": 1,
            },
            {"question": "Would Caroline like lakes?", "answer": "Likely yes", "evidence": ["D1:03"], "category": 3},
            {
                "question": "What did Caroline raise awareness for in the race?",
                "adversarial_answer": "mental health",
                "evidence": ["D2:1"],
                "category": 5,
            },
            {"question": "What year?", "answer": 2022, "evidence": ["D9:9"], "category": 4},
        ],
        "event_summary": {},
        "observation": {},
        "session_summary": {},
    }


def _write(tmp_path, data, name="locomo10.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def _load(tmp_path, data):
    out = tmp_path / "bench"
    import_locomo([_write(tmp_path, data)], out)
    b = load_bench(out)
    t = b.tier("all")
    return b, read_turns(out / t.turns_file), read_questions(out / t.questions_file)


def test_categories_haystacks_captions(tmp_path):
    bench, turns, qs = _load(tmp_path, [_conv("conv-26"), _conv("conv-30", "Jon", "Gina")])
    assert bench.tier_names == ("all",)
    q = {x.id: x for x in qs}
    assert [q[f"conv-26-q{i}"].axis for i in range(1, 7)] == [
        "TEMPORAL",
        "BASIC",
        "MULTI",
        "IMPLICIT",
        "ABSTAIN",
        "BASIC",
    ]
    # one haystack per conversation, turn ids restart; empty session 3 skipped
    assert [(t.haystack, t.turn_id, t.session_id) for t in turns[:6]] == [
        ("conv-26", 1, 1),
        ("conv-26", 2, 1),
        ("conv-26", 3, 1),
        ("conv-26", 4, 2),
        ("conv-26", 5, 2),
        ("conv-30", 1, 1),
    ]
    assert turns[0].date == "2023-05-08" and turns[3].date == "2023-06-27"
    # the image turn: systems see the caption in the text, as LoCoMo's evaluation shows it; URL apart
    img = turns[1]
    assert (img.text, img.caption, img.image) == (
        "That's great! Look at this. and shared a photo of a lake",
        "a photo of a lake",
        "https://example.org/a.jpg",
    )
    assert turns[0].caption is None and turns[0].image is None
    # evidence: dia ids → turn ids; "D1:2; D2:1" split; "D1:03" read as D1:3
    assert q["conv-26-q1"].evidence_turns == (1,)
    assert q["conv-26-q3"].evidence_turns == (2, 4) and q["conv-26-q3"].evidence_sessions == (1, 2)
    assert q["conv-26-q4"].evidence_turns == (3,)
    # adversarial: kept, scored as abstention, flagged, trap answer kept
    adv = q["conv-26-q5"]
    assert adv.expect == "no_memory" and adv.gold_answer == "" and adv.evidence_turns == ()
    assert adv.extra["locomo_category"] == 5 and adv.extra["adversarial_answer"] == "mental health"
    assert all(x.extra["locomo_category"] in (1, 2, 3, 4) for x in qs if x.expect == "answer")
    assert len(qs) == 12
    # an unresolvable evidence id is kept, not dropped
    bad = q["conv-26-q6"]
    assert bad.gold_answer == "2022" and bad.evidence_turns == () and bad.extra["unresolved_evidence"] == ["D9:9"]
    assert q["conv-26-q1"].asked_at == "2023-06-27"
    meta = yaml.safe_load((tmp_path / "bench" / "bench.yaml").read_text())
    assert meta["axis_map"] == {
        "1 multi-hop": "MULTI",
        "2 temporal": "TEMPORAL",
        "3 open-domain": "IMPLICIT",
        "4 single-hop": "BASIC",
        "5 adversarial": "ABSTAIN",
    }
    assert meta["questions_per_category"]["5 adversarial"] == 2
    assert meta["source_slips"] == {"unresolved_evidence": 2, "duplicate_dia_ids": 0, "sessions_out_of_date_order": 0}
    assert meta["license"] == "CC BY-NC 4.0"


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda c: c["qa"][1].pop("answer"), "qa[1].answer"),
        (lambda c: c["qa"][0].update(category=7), "qa[0].category"),
        (lambda c: c["conversation"]["session_2"][1].update(dia_id="2:2"), "conversation.session_2[1].dia_id"),
        (lambda c: c["conversation"].update(session_2_date_time="yesterday"), "conversation.session_2_date_time"),
        (lambda c: c["conversation"]["session_1"][0].pop("text"), "conversation.session_1[0].text"),
        (lambda c: c["conversation"]["session_1"][1].update(blip_caption=3), "conversation.session_1[1].blip_caption"),
    ],
)
def test_malformed_names_record_and_field(tmp_path, mutate, field):
    data = [_conv("conv-26"), _conv("conv-30")]
    mutate(data[1])
    src = _write(tmp_path, data)
    with pytest.raises(InputError) as e:
        import_locomo([src], tmp_path / "out")
    assert str(e.value).startswith(f"{src} record 1 (sample_id 'conv-30'): field '{field}': ")
    assert not (tmp_path / "out").exists() and [p.name for p in tmp_path.iterdir()] == ["locomo10.json"]


def test_cli_import_locomo(tmp_path, capsys):
    src = _write(tmp_path, [_conv("conv-26")])
    assert main(["import", "locomo", str(src), "--out", str(tmp_path / "b")]) == 0
    assert "all: 5 turns, 2 sessions" in capsys.readouterr().out


def test_source_slips_are_counted_not_fatal(tmp_path):
    c = _conv("conv-26")
    c["conversation"]["session_2_date_time"] = "9:00 am on 1 May, 2023"  # before session 1
    c["conversation"]["session_2"][1]["dia_id"] = "D1:1"  # duplicate dia_id: evidence keeps the first
    bench, turns, qs = _load(tmp_path, [c])
    meta = yaml.safe_load((tmp_path / "bench" / "bench.yaml").read_text())
    assert meta["source_slips"] == {"unresolved_evidence": 1, "duplicate_dia_ids": 1, "sessions_out_of_date_order": 1}
    assert [t.date for t in turns] == ["2023-05-08"] * 3 + ["2023-05-01"] * 2
    assert {q.id: q for q in qs}["conv-26-q1"].evidence_turns == (1,)


def test_audit_counts_remote_images_instead_of_failing(tmp_path):
    from memeval.audit import audit

    _load(tmp_path, [_conv("conv-26"), _conv("conv-30", "Jon", "Gina")])
    r = audit(tmp_path / "bench")
    check = r.check("images-resolve")
    assert check.status == "pass" and check.numbers["remote_images_not_checked"] == 2
    # the difficulty probe reads one haystack: a conversation per haystack is said, not a PASS
    diff = r.check("difficulty")
    assert diff.status == "report" and diff.numbers["all"].startswith("not measured: 2 haystacks")


def test_source_sha256_is_the_file_bytes_hash(tmp_path):
    """The recorded sha256 is sha256(file bytes), as ``sha256sum`` prints it (no name mixed in)."""
    import hashlib

    src = _write(tmp_path, [_conv("conv-26")])
    out = tmp_path / "bench"
    import_locomo([src], out)
    entry = yaml.safe_load((out / "bench.yaml").read_text())["source_files"]["all"]
    assert entry == {"file": src.name, "sha256": hashlib.sha256(src.read_bytes()).hexdigest()}
