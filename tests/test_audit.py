"""``memeval audit``: passes on sound benches, fails naming the question on broken ones."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from memeval.audit import audit
from memeval.bench.io import load_bench, save_bench, write_questions, write_turns
from memeval.bench.model import Bench, Question, Tier, Turn
from memeval.cli import main
from shared_data import GLASSHOUSE, needs_glasshouse

# ---------------------------------------------------------------------------------------------
# A small hand-written bench: a story (core) and the story with filler between (small).

STORY = [  # (session, date, speaker, text)
    (1, "2026-01-05", "user", "My dentist is Dr. Okafor, over on Pine Street."),
    (1, "2026-01-05", "assistant", "Got it, I'll remember Dr. Okafor for your check-ups."),
    (2, "2026-01-20", "user", "On weekdays I drink green tea at my desk."),
    (3, "2026-02-10", "user", "At weekends I brew strong coffee in the big moka pot."),
    (4, "2026-03-01", "user", "My sister Lina's birthday is on March 3."),
    (5, "2026-04-12", "user", "Lina's birthday is March 13, if I remember right."),
    (6, "2026-04-20", "user", "The garage door code starts with 47."),
    (7, "2026-05-02", "user", "The garage door code ends with 19."),
    (8, "2026-05-15", "user", "I adopted a grey cat called Pixel."),
    (9, "2026-06-01", "user", "I moved from Leeds to Lyon for the new job."),
    (10, "2026-06-20", "user", "I started running 5 km every Sunday with Pixel watching from the window."),
]
FILLER = [
    "How long should I boil an egg for a soft yolk?",
    "Six minutes from boiling gives a soft yolk.",
    "Can you suggest a film for a rainy evening?",
    "A slow mystery with a good soundtrack works well on a rainy evening.",
]


def _q(id, axis, gold="", ev=(), **kw) -> Question:
    return Question(id=id, axis=axis, question_en=f"question {id}?", gold_answer=gold, evidence_turns=tuple(ev), **kw)


def _questions(pos: dict[int, int]) -> list[Question]:
    """Questions with evidence given as story indexes, mapped to the tier's turn ids by ``pos``."""
    e = lambda *i: [pos[x] for x in i]  # noqa: E731
    return [
        _q("Q001", "BASIC", "Okafor", e(0)),
        _q("Q002", "RECONCILE", "tea on weekdays, coffee at weekends", e(2, 3), side_a="weekdays", side_b="weekends"),
        _q("Q003", "CONTRADICT", "", e(4, 5), clash_a="March 3", clash_b="March 13"),
        _q("Q004", "ABSTAIN", "", (), expect="no_memory"),
        _q("Q005", "GATHER", "4719", e(6, 7), gold_parts=("47", "19")),
        _q("Q006", "MULTI", "Pixel", e(8, 10)),
        _q("Q007", "CROSS", "Lyon", e(9)),
        _q("Q008", "IMPLICIT", "5 km", e(10)),
        _q("Q009", "TEMPORAL", "Leeds", e(9)),
        _q("Q010", "CONFLICT", "No, Pixel", e(8)),
    ]


# IDK to everything, by the rules of benchmark.md §4: ABSTAIN (w3) 1, CONTRADICT (w3) 0.5, the
# rest 0; weights 1+2+3+3+2+3+3+3+2+3 = 25, so 4.5 / 25 weighted and 1.5 / 10 unweighted.
IDK_WEIGHTED, IDK_UNWEIGHTED = 4.5 / 25, 1.5 / 10
# Evidence as the answer, 8 answerable questions (weights 1,2,2,3,3,3,2,3 = 19): all score 1 but
# CONFLICT, whose evidence holds the current value without a correction word: 0.5 (rule 10).
CEIL_WEIGHTED, CEIL_UNWEIGHTED = 17.5 / 19, 7.5 / 8


def _write_bench(root: Path, *, questions=None) -> Path:
    """core = the story; small = the story with two filler turns before each story session."""
    root.mkdir(parents=True, exist_ok=True)
    tiers = []
    for name, with_filler in (("core", False), ("small", True)):
        turns, pos = [], {}
        for i, (s, d, sp, text) in enumerate(STORY):
            if with_filler and (i == 0 or STORY[i - 1][0] != s):
                for k, ftext in enumerate(FILLER[:2] if i % 2 else FILLER[2:]):
                    turns.append(Turn(len(turns) + 1, 100 + i, "user" if k == 0 else "assistant", ftext, d))
            turns.append(Turn(len(turns) + 1, s, sp, text, d))
            pos[i] = len(turns)
        write_turns(root / f"turns_{name}.jsonl", turns)
        qs = (questions or _questions)(pos)
        write_questions(root / f"questions_{name}.jsonl", qs)
        n_sessions = len({(t.session_id) for t in turns})
        tiers.append(
            Tier(
                name,
                f"turns_{name}.jsonl",
                f"questions_{name}.jsonl",
                n_turns=len(turns),
                n_sessions=n_sessions,
                n_questions=len(qs),
            )
        )
    save_bench(Bench(name="mini", version="1", tiers=tuple(tiers), root=str(root)))
    return root


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _turn_id(path: Path, fragment: str) -> int:
    (tid,) = [r["turn_id"] for r in _rows(path) if fragment in r["text"]]
    return tid


def _edit_lines(path: Path, edit) -> None:
    """Rewrite a JSONL file through ``edit(list_of_dicts) -> list_of_dicts``."""
    rows = edit(_rows(path))
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _rehash(root: Path) -> None:
    save_bench(load_bench(root))


def _cli(capsys, *argv) -> tuple[int, list[str], str]:
    code = main(["audit", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


def _fails(lines: list[str]) -> list[str]:
    return [x for x in lines if x.startswith("FAIL ")]


@pytest.fixture
def bench(tmp_path) -> Path:
    return _write_bench(tmp_path / "mini")


# ---------------------------------------------------------------------------------------------
# Sound benches pass, with the expected figures


def test_sound_bench_passes_with_hand_computed_floor_and_ceiling(bench):
    r = audit(bench)
    assert r.passed, r.summary()
    assert r.tiers == ("core", "small")
    assert not r.findings
    floor, ceiling = r.check("idk-floor").numbers, r.check("evidence-ceiling").numbers
    for tier in ("core", "small"):
        assert floor[tier]["weighted"] == pytest.approx(IDK_WEIGHTED)
        assert floor[tier]["unweighted"] == pytest.approx(IDK_UNWEIGHTED)
        assert ceiling[tier]["weighted"] == pytest.approx(CEIL_WEIGHTED)
        assert ceiling[tier]["unweighted"] == pytest.approx(CEIL_UNWEIGHTED)
        assert ceiling[tier]["n"] == 8
    # 13 evidence turns per tier; 9 questions checked for gold (Q004 exempt) in each of 2 tiers
    assert r.check("evidence-resolves").numbers["evidence_turns"] == 2 * 13
    assert r.check("evidence-contains-gold").numbers == {"checked": 18, "exempt": 2}
    assert r.check("tiers-nested").numbers == {"pairs": ["core<small"], "turns_compared": len(STORY)}
    assert r.check("story-identical").numbers == {"shared_questions": 10}
    assert r.check("reconcile-not-in-one-turn").numbers == {"pairs": 2}
    assert r.check("manifest-hash").status == "pass"


def test_cli_passes_exit_0_and_writes_json(bench, tmp_path, capsys):
    out = tmp_path / "report.json"
    code, lines, err = _cli(capsys, bench, "--json", out)
    assert code == 0, lines
    assert not _fails(lines) and err == ""
    assert lines[-1].startswith("audit PASS: 14/14 checks passed (and 1 report)")
    assert "  PASS evidence-contains-gold  checked=18 exempt=2" in lines
    data = json.loads(out.read_text())
    assert data["passed"] is True and data["tiers"] == ["core", "small"]
    assert {c["name"]: c["status"] for c in data["checks"]}["tiers-nested"] == "pass"


def test_cli_prints_one_short_line_per_check_detail_on_request(bench, capsys):
    code, lines, _ = _cli(capsys, bench)
    checks = [ln for ln in lines if ln.startswith("  ")]
    assert (
        code == 0 and len(checks) == 15 and max(len(ln) for ln in checks) <= 100
    )  # the header carries the path as given
    (idk,) = [ln for ln in checks if ln.startswith("  PASS idk-floor")]
    assert "{" not in idk and re.search(r"core=\d\.\d{3}", idk)  # a tier by its headline figure, no dict
    _, verbose, _ = _cli(capsys, bench, "--verbose")
    (full,) = [ln for ln in verbose if ln.startswith("  PASS idk-floor")]
    assert "weighted: " in full and "unweighted: " in full and len(full) > len(idk)
    code, text, _ = _cli(capsys, bench, "--format", "json")
    doc = json.loads("\n".join(text))
    assert code == 0 and doc["passed"] is True
    assert set(doc["checks"][11]["numbers"]["core"]) >= {"weighted", "unweighted", "n"}


def test_tiers_option_audits_only_those(bench, capsys):
    code, lines, _ = _cli(capsys, "--tiers", "small", bench)  # options may come before DIR
    assert code == 0
    assert lines[0].endswith("tiers: small")
    assert "  SKIP tiers-nested  (one tier)" in lines
    code, lines, _ = _cli(capsys, bench, "--tiers", "small", "--tiers", "core")
    assert code == 0 and lines[0].endswith("tiers: core, small")  # manifest order
    code, _, err = _cli(capsys, bench, "--tiers", "core,huge")
    assert code == 2 and "field 'tiers': no tier 'huge'" in err


# ---------------------------------------------------------------------------------------------
# Broken benches fail and name the question


def test_gold_removed_from_evidence_turn(bench, capsys):
    for name in ("core", "small"):
        _edit_lines(
            bench / f"turns_{name}.jsonl",
            lambda rows: [{**r, "text": r["text"].replace("Okafor", "Adeyemi")} for r in rows],
        )
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench)
    assert code == 1
    gold, ceiling = _fails(lines)[0::2], _fails(lines)[1::2]
    assert gold == [
        "FAIL evidence-contains-gold tier=core Q001: gold 'Okafor' not in evidence turns [1]",
        "FAIL evidence-contains-gold tier=small Q001: gold 'Okafor' not in evidence turns [3]",
    ]
    # the ceiling drops to 16.5/19 weighted, 6.5/8 unweighted: below 0.9; the weakest are named
    for tier, line in zip(("core", "small"), ceiling):
        assert line == (
            f"FAIL evidence-ceiling tier={tier}: evidence turns as the answer score 0.868 weighted, "
            f"0.812 unweighted, below 0.9; weak axes: BASIC 0.00, CONFLICT 0.50; "
            f"lowest: Q001 (0), Q010 (0.5)"
        )


def test_evidence_id_out_of_range(bench, capsys):
    _edit_lines(
        bench / "questions_small.jsonl",
        lambda rows: [{**r, "evidence_turns": [999]} if r["id"] == "Q007" else r for r in rows],
    )
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench)
    assert code == 1
    n_small = len(_rows(bench / "turns_small.jsonl"))
    assert _fails(lines) == [
        f"FAIL evidence-resolves tier=small Q007: evidence turns [999] not in the tier's turns, "
        f"which end at turn {n_small}",
    ]


def test_evidence_session_unknown(bench, capsys):
    _edit_lines(
        bench / "questions_core.jsonl",
        lambda rows: [{**r, "evidence_sessions": [1, 77]} if r["id"] == "Q001" else r for r in rows],
    )
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench)
    assert code == 1
    assert _fails(lines) == ["FAIL evidence-resolves tier=core Q001: evidence sessions [77] not in the tier's turns"]


def test_story_turn_altered_in_higher_tier(bench, capsys):
    def alter(rows):
        return [
            {**r, "text": r["text"].replace("Pine Street", "Pine St.")} if "Okafor, over" in r["text"] else r
            for r in rows
        ]

    _edit_lines(bench / "turns_small.jsonl", alter)
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench)
    assert code == 1
    assert _fails(lines) == [
        "FAIL story-identical tier=small Q001: evidence turn 3 text differs from tier core",
        "FAIL tiers-nested tier=small: core turn 1 (session 1, 2026-01-05) has no turn with the same text, "
        "speaker and date in small",
    ]


def test_story_turns_reordered_in_higher_tier(bench):
    def swap(rows):  # the two turns of session 1 change places in small
        i = _index(rows, "Okafor, over")
        j = _index(rows, "I'll remember Dr. Okafor")
        rows[i], rows[j] = {**rows[j], "turn_id": rows[i]["turn_id"]}, {**rows[i], "turn_id": rows[j]["turn_id"]}
        return rows

    _edit_lines(bench / "turns_small.jsonl", swap)
    _rehash(bench)
    r = audit(bench)
    assert [f.line() for f in r.findings] == [
        "FAIL story-identical tier=small Q001: evidence turn 3 text differs from tier core",
        "FAIL tiers-nested tier=small: core turns from turn 2 on are not in the same order in small",
    ]


def _index(rows: list[dict], fragment: str) -> int:
    (i,) = [k for k, r in enumerate(rows) if fragment in r["text"]]
    return i


def test_same_question_with_another_gold_in_a_higher_tier(bench, capsys):
    _edit_lines(
        bench / "questions_small.jsonl",
        lambda rows: [{**r, "gold_answer": "Dr. Okafor"} if r["id"] == "Q001" else r for r in rows],
    )
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench)
    assert code == 1
    assert _fails(lines) == [
        "FAIL story-identical tier=small Q001: axis/gold BASIC 'Dr. Okafor' differ from tier core (BASIC 'Okafor')"
    ]


def test_max_findings_caps_lines_but_not_counts(bench, capsys):
    _edit_lines(
        bench / "questions_core.jsonl", lambda rows: [{**r, "evidence_turns": [500 + i]} for i, r in enumerate(rows)]
    )
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench, "--tiers", "core", "--max-findings", "3")
    assert code == 1
    resolves = [x for x in _fails(lines) if x.startswith("FAIL evidence-resolves")]
    assert len(resolves) == 4  # 3 shown + the "more" line
    assert resolves[-1] == "FAIL evidence-resolves: ... and 7 more not shown"
    assert audit(bench, ["core"]).check("evidence-resolves").failures == 10
    with pytest.raises(SystemExit) as e:
        main(["audit", str(bench), "--max-findings", "0"])
    assert e.value.code == 2 and "at least 1, got '0'" in capsys.readouterr().err


def test_reconcile_sides_in_one_turn(bench, capsys):
    def add(rows):
        extra = {
            "turn_id": len(rows) + 1,
            "session_id": 10,
            "speaker": "assistant",
            "date": rows[-1]["date"],
            "text": "So: tea on weekdays, coffee at weekends. Noted.",
        }
        return rows + [extra]

    _edit_lines(bench / "turns_small.jsonl", add)
    n = len(_rows(bench / "turns_small.jsonl"))
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench)
    assert code == 1
    # the added turn also makes the manifest's n_turns stale
    assert _fails(lines) == [
        f"FAIL manifest-consistent tier=small: bench.yaml says n_turns={n - 1}, the files hold {n}",
        f"FAIL reconcile-not-in-one-turn tier=small Q002: turn {n} holds both sides 'weekdays' and 'weekends'",
    ]


def test_contradict_resolved_later(bench):
    def add(rows):
        extra = {
            "turn_id": len(rows) + 1,
            "session_id": 11,
            "speaker": "user",
            "date": "2026-07-01",
            "text": "Mum confirmed it: Lina's birthday really is March 13.",
        }
        return rows + [extra]

    ids = {}
    for name in ("core", "small"):
        _edit_lines(bench / f"turns_{name}.jsonl", add)
        ids[name] = (
            len(_rows(bench / f"turns_{name}.jsonl")),
            _turn_id(bench / f"turns_{name}.jsonl", "March 13, if I remember"),
        )
    _rehash(bench)
    r = audit(bench)
    found = [f for f in r.findings if f.check == "contradict-unresolved"]
    assert [(f.tier, f.qid, f.reason) for f in found] == [
        (t, "Q003", f"turn {new} mentions clash value 'March 13' after the later clash turn {clash}")
        for t, (new, clash) in ids.items()
    ]
    assert r.failed_checks == ("manifest-consistent", "contradict-unresolved")


def test_contradict_other_values_later_are_fine(bench):
    # "March 30" and "March 31st" are not mentions of "March 3" or "March 13"
    later = ["The gym reopens on March 30.", "Rent is due March 31st."]
    _edit_lines(
        bench / "turns_core.jsonl",
        lambda rows: rows + [{**rows[-1], "turn_id": len(rows) + 1 + k, "text": t} for k, t in enumerate(later)],
    )
    _rehash(bench)
    r = audit(bench, ["core"])
    assert r.check("contradict-unresolved").status == "pass"
    # ... whereas "3rd of March" would be
    _edit_lines(
        bench / "turns_core.jsonl",
        lambda rows: rows + [{**rows[-1], "turn_id": len(rows) + 1, "text": "Lina: born March 3rd."}],
    )
    _rehash(bench)
    assert [f.qid for f in audit(bench, ["core"]).findings if f.check == "contradict-unresolved"] == ["Q003"]


def test_all_abstain_bench_fails_idk_floor(tmp_path, capsys):
    def only_abstain(pos):
        return [_q(f"Q{i:03d}", "ABSTAIN", "", (), expect="no_memory") for i in range(1, 5)]

    root = _write_bench(tmp_path / "abstain", questions=only_abstain)
    code, lines, _ = _cli(capsys, root, "--tiers", "core")
    assert code == 1
    assert _fails(lines) == [
        "FAIL idk-floor tier=core: answering IDK to all 4 questions scores 100.0% weighted "
        "(100.0% unweighted), above 20%; from ABSTAIN 100.0%"
    ]


def test_wrong_content_hash(bench, capsys):
    p = bench / "questions_core.jsonl"
    p.write_bytes(p.read_bytes().replace(b"question Q001?", b"question Q001 ?"))
    code, lines, _ = _cli(capsys, bench)
    assert code == 1
    (line,) = _fails(lines)
    assert line.startswith("FAIL manifest-hash: content_hash sha256:") and "does not match the files" in line


def test_dates_going_backwards_and_duplicate_ids(bench, capsys):
    def back(rows):
        rows[5]["date"] = "2025-12-31"
        return rows

    _edit_lines(bench / "turns_core.jsonl", back)
    _edit_lines(bench / "questions_core.jsonl", lambda rows: rows + [rows[0]])
    _rehash(bench)
    code, lines, _ = _cli(capsys, bench, "--tiers", "core")
    assert code == 1
    assert _fails(lines) == [
        "FAIL dates-chronological tier=core: turns_core.jsonl:6: turn 6 dated 2025-12-31 comes after a turn "
        "dated 2026-03-01 (line 5)",
        "FAIL ids-unique tier=core Q001: questions_core.jsonl:11: question id repeats (first at line 1)",
    ]


@pytest.mark.parametrize(
    "which,line,field",
    [
        ("turns_small.jsonl", '{"turn_id": 5, "session_id": 1, "speaker": "user", "date": "2026-01-05"}', "text"),
        (
            "questions_core.jsonl",
            '{"id": "Q999", "axis": "BASIC", "question_en": "?", "evidence_turns": "7"}',
            "evidence_turns",
        ),
    ],
)
def test_malformed_line_exits_2_naming_file_line_field(bench, capsys, tmp_path, which, line, field):
    p = bench / which
    rows = p.read_text(encoding="utf-8").splitlines()
    rows.insert(3, line)
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "report.json"
    code, lines, err = _cli(capsys, bench, "--json", out)
    assert code == 2
    assert err.strip().splitlines() == [
        f"memeval audit: error: {p}:4: field '{field}': " + ("missing" if field == "text" else "expected a list of int")
    ]
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# One haystack per question (LongMemEval-style): ids restart per haystack


def _write_haystack_bench(root: Path, *, break_small: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    hays = {
        "h1": ["I keep my passport in the blue drawer.", "Noted."],
        "h2": ["My bike is a green Brompton.", "Nice bike."],
    }
    tiers = []
    for name in ("oracle", "s"):
        turns = []
        for hid, texts in hays.items():
            rows = ([] if name == "oracle" else ["What is a good bread recipe?"]) + texts
            if name == "s" and break_small and hid == "h2":
                rows[1] = rows[1].replace("green", "red")
            for i, text in enumerate(rows, 1):
                turns.append(Turn(i, f"{hid}-s1", "user", text, "2026-02-01", haystack=hid))
        off = 0 if name == "oracle" else 1
        qs = [
            _q("q1", "BASIC", "blue drawer", [1 + off], haystack="h1", evidence_sessions=("h1-s1",)),
            _q("q2", "BASIC", "Brompton", [1 + off], haystack="h2"),
            _q("q3_abs", "ABSTAIN", "", [], haystack="h2", expect="no_memory"),
            _q("q4", "PARAPHRASE", "Brompton", [1 + off], haystack="h2"),
            _q("q5", "CROSS", "green", [1 + off], haystack="h2"),
            _q("q6", "MULTI", "passport", [1 + off], haystack="h1"),
            _q("q7", "IMPLICIT", "blue", [1 + off], haystack="h1"),
            _q("q8", "TEMPORAL", "drawer", [1 + off], haystack="h1"),
        ]
        write_turns(root / f"turns_{name}.jsonl", turns)
        write_questions(root / f"questions_{name}.jsonl", qs)
        tiers.append(Tier(name, f"turns_{name}.jsonl", f"questions_{name}.jsonl"))
    save_bench(Bench(name="hay", version="1", tiers=tuple(tiers), root=str(root)))
    return root


def test_per_question_haystacks_pass_and_resolve_within_their_haystack(tmp_path):
    root = _write_haystack_bench(tmp_path / "hay")
    r = audit(root)
    assert r.passed, r.summary()
    assert r.check("tiers-nested").numbers["turns_compared"] == 4
    # each haystack of tier s has turns 1-3: turn 4 exists in neither
    _edit_lines(
        root / "questions_s.jsonl", lambda rows: [{**r, "evidence_turns": [4]} if r["id"] == "q2" else r for r in rows]
    )
    _rehash(root)
    r = audit(root)
    assert [f.line() for f in r.findings] == [
        "FAIL evidence-resolves tier=s q2: evidence turns [4] not in the tier's turns (haystack 'h2'), "
        "which end at turn 3"
    ]


def test_per_question_haystack_altered_in_larger_tier(tmp_path):
    r = audit(_write_haystack_bench(tmp_path / "hay", break_small=True))
    assert r.failed_checks == ("evidence-contains-gold", "tiers-nested", "story-identical", "evidence-ceiling")
    assert [f.line() for f in r.findings if f.check in ("tiers-nested", "story-identical")] == [
        "FAIL story-identical tier=s q2: evidence turn 2 text differs from tier oracle",
        "FAIL story-identical tier=s q4: evidence turn 2 text differs from tier oracle",
        "FAIL story-identical tier=s q5: evidence turn 2 text differs from tier oracle",
        "FAIL tiers-nested tier=s: oracle haystack 'h2' turn 1 (session h2-s1, 2026-02-01) has no turn with "
        "the same text, speaker and date in s",
    ]
    assert [f.line() for f in r.findings if f.check == "evidence-contains-gold"] == [
        "FAIL evidence-contains-gold tier=s q5: gold 'green' not in evidence turns [2]"
    ]


# ---------------------------------------------------------------------------------------------
# The value look-up behind reconcile/contradict never misses a turn the scorer would match

TRICKY_TEXTS = [
    "We met at the Café Olé on the corner.",
    "I paid one thousand eight hundred dollars for it.",
    "About a quarter of the cake is left.",
    "It costs 4,822 pounds.",
    "رمز الباب ٤٨٢٢",
    "東京に住んでいます。",
    "وبيروت جميلة في الربيع",
    "Cities are loud at night.",
    "He's twenty-five today.",
    "I have five cats.",
    "Swim at the Quayside Pool on Mondays.",
    "O'Brien's bakery opens at 7.",
    "ＡＢＣ Corp sent the invoice.",
    "Add 1/4 cup of sugar.",
    "Half past nine works.",
    "Die Straße ist lang.",
    "İstanbul was warm.",
    "Nothing to see here.",
    "The 25th of May.",
    "I booked 1800 seats.",
    "Weekdays are for tea; weekends for coffee.",
    "Two and a half hours.",
    "A dozen eggs, please.",
    "Rates rose 5 percent.",
    "It was 5.0 km.",
    "Due on the twenty-first of May.",
    "We live on the fifth floor.",
    "Tengo cinco gatos.",
    "Ich habe drei Katzen.",
    "У меня пять кошек.",
    "Il y a douze œufs.",
]
TRICKY_VALUES = [
    "cafe ole",
    "Café",
    "1800",
    "$1,800",
    "0.25",
    "4822",
    "東京",
    "بيروت",
    "city",
    "25",
    "5",
    "Quayside Pool",
    "O'Brien",
    "ABC Corp",
    "9",
    "0.5",
    "strasse",
    "Istanbul",
    "weekday",
    "weekends",
    "tea",
    "1/4",
    "twenty-five",
    "Mondays",
    "2.5",
    "12",
    "5%",
    "5 km",
    "a quarter",
    "21st",
    "5th",
    "3",
    "1st",
]


@pytest.mark.parametrize("value", TRICKY_VALUES)
def test_value_lookup_is_a_superset_of_contains(value):
    from memeval.audit.haystack import Haystack
    from memeval.scoring.matching import contains

    h = Haystack(None)
    for i, text in enumerate(TRICKY_TEXTS, 1):
        h.turns.append(Turn(i, i, "user", text, "2026-01-01"))
    for start in (0, 7):
        truth = {p for p in range(start, len(TRICKY_TEXTS)) if contains(TRICKY_TEXTS[p], value)}
        got = set(h.candidates(value, start))
        assert truth <= got, (value, start, sorted(truth - got))
        assert all(p >= start for p in got)
    # and it narrows: a word value is looked up, not scanned over every turn
    assert set(h.candidates("Quayside Pool")) == {10}
    assert set(h.candidates("4822")) == {3, 4}


# ---------------------------------------------------------------------------------------------
# The generated presets pass; deliberately broken copies of tiny fail, naming the question

from memeval.bench import lifelog  # noqa: E402


@pytest.fixture(scope="module")
def tiny_master(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "tiny"
    lifelog.generate("tiny", 1, out)
    return out


@pytest.fixture
def tiny(tiny_master, tmp_path) -> Path:
    import shutil

    return Path(shutil.copytree(tiny_master, tmp_path / "tiny"))


def _by_id(path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in _rows(path)}


def _first(path: Path, axis: str, also_in: Path | None = None) -> dict:
    other = _by_id(also_in) if also_in else None
    return next(
        r for r in _rows(path) if r["axis"] == axis and r["evidence_turns"] and (other is None or r["id"] in other)
    )


def test_generated_tiny_passes(tiny_master):
    r = audit(tiny_master)
    assert r.passed, r.summary()
    assert r.tiers == ("core", "small", "medium", "full")
    for c in ("reconcile-not-in-one-turn", "contradict-unresolved", "tiers-nested", "story-identical"):
        assert r.check(c).status == "pass"  # ran, not skipped
    assert r.check("tiers-nested").numbers["pairs"] == ["core<small", "small<medium", "medium<full"]
    # the ceiling is measured in every tier
    assert set(r.check("evidence-ceiling").numbers) >= {"core", "small", "medium", "full"}


def test_generated_demo_passes(tmp_path, capsys, demo1_bench):
    out = shutil.copytree(demo1_bench, tmp_path / "demo")  # the session's demo seed-1 bench; audit may cache into it
    code, lines, _ = _cli(capsys, out)
    assert code == 0, "\n".join(_fails(lines))
    assert lines[-1].startswith("audit PASS: 14/14 checks passed (and 1 report)")
    assert "  PASS tiers-nested  pairs=['core<small', 'small<medium', 'medium<full']" in "\n".join(lines)


def test_tiny_gold_removed_from_evidence_turn(tiny, capsys):
    q = _first(tiny / "questions_small.jsonl", "BASIC")
    (tid,) = q["evidence_turns"]
    old = next(r["text"] for r in _rows(tiny / "turns_small.jsonl") if r["turn_id"] == tid)
    for t in ("core", "small", "medium", "full"):  # everywhere, so the tiers still nest
        _edit_lines(
            tiny / f"turns_{t}.jsonl",
            lambda rows: [{**r, "text": "Nothing much happened today."} if r["text"] == old else r for r in rows],
        )
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    assert (
        f"FAIL evidence-contains-gold tier=small {q['id']}: gold {q['gold_answer']!r} not in evidence turns [{tid}]"
        in lines
    )
    assert {x.split()[1] for x in _fails(lines)} <= {"evidence-contains-gold", "evidence-ceiling"}


def test_tiny_evidence_id_out_of_range(tiny, capsys):
    q = _first(tiny / "questions_medium.jsonl", "TEMPORAL")
    n = len(_rows(tiny / "turns_medium.jsonl"))
    _edit_lines(
        tiny / "questions_medium.jsonl",
        lambda rows: [{**r, "evidence_turns": [n + 5]} if r["id"] == q["id"] else r for r in rows],
    )
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    assert _fails(lines)[0] == (
        f"FAIL evidence-resolves tier=medium {q['id']}: evidence turns [{n + 5}] not in "
        f"the tier's turns, which end at turn {n}"
    )


def test_tiny_story_turn_altered_in_higher_tier(tiny, capsys):
    q = _first(tiny / "questions_core.jsonl", "BASIC", also_in=tiny / "questions_small.jsonl")
    (core_tid,) = q["evidence_turns"]
    (small_tid,) = _by_id(tiny / "questions_small.jsonl")[q["id"]]["evidence_turns"]
    _edit_lines(
        tiny / "turns_small.jsonl",
        lambda rows: [{**r, "text": r["text"] + " "} if r["turn_id"] == small_tid else r for r in rows],
    )
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    fails = _fails(lines)
    assert f"FAIL story-identical tier=small {q['id']}: evidence turn {small_tid} text differs from tier core" in fails
    assert any(x.startswith(f"FAIL tiers-nested tier=small: core turn {core_tid} (") for x in fails)


def _filler_positions(root: Path, tier: str, below: str) -> list[int]:
    """Indexes of the turns of ``tier`` that are not in the tier ``below`` (filler)."""
    lower = {(r["text"], r["speaker"], r["date"]) for r in _rows(root / f"turns_{below}.jsonl")}
    return [
        i
        for i, r in enumerate(_rows(root / f"turns_{tier}.jsonl"))
        if (r["text"], r["speaker"], r["date"]) not in lower
    ]


def test_tiny_reconcile_turn_holding_both_sides(tiny, capsys):
    q = _first(tiny / "questions_full.jsonl", "RECONCILE")
    i = _filler_positions(tiny, "full", "medium")[0]

    def plant(rows):
        rows[i] = {**rows[i], "text": f"Some days it's {q['side_a']}, other days {q['side_b']}; both are fine."}
        return rows

    _edit_lines(tiny / "turns_full.jsonl", plant)
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    tid = i + 1 if _rows(tiny / "turns_full.jsonl")[i]["turn_id"] == i + 1 else None
    assert _fails(lines) == [
        f"FAIL reconcile-not-in-one-turn tier=full {q['id']}: turn {tid} holds both sides "
        f"{q['side_a']!r} and {q['side_b']!r}"
    ]


def test_tiny_contradict_resolved_later(tiny, capsys):
    q = _first(tiny / "questions_full.jsonl", "CONTRADICT")
    rows = _rows(tiny / "turns_full.jsonl")
    later = max(q["evidence_turns"])
    i = next(k for k in _filler_positions(tiny, "full", "core") if rows[k]["turn_id"] > later)
    key = (rows[i]["text"], rows[i]["speaker"], rows[i]["date"])
    planted = f"Settled it: the right one is {q['clash_b']}."
    for t in ("small", "medium", "full"):  # the same filler turn in every tier that has it: tiers still nest
        _edit_lines(
            tiny / f"turns_{t}.jsonl",
            lambda rows: [{**r, "text": planted} if (r["text"], r["speaker"], r["date"]) == key else r for r in rows],
        )
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    assert (
        f"FAIL contradict-unresolved tier=full {q['id']}: turn {rows[i]['turn_id']} mentions "
        f"clash value {q['clash_b']!r} after the later clash turn {later}"
    ) in lines
    assert {x.split()[1] for x in _fails(lines)} == {"contradict-unresolved"}


def test_tiny_only_abstention_questions_fail_idk_floor(tiny, capsys):
    _edit_lines(
        tiny / "questions_core.jsonl", lambda rows: [r for r in rows if r["axis"] in ("ABSTAIN", "FALSE_MEMORY")]
    )
    n = len(_rows(tiny / "questions_core.jsonl"))
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny, "--tiers", "core")
    assert code == 1
    assert [x.split(":")[0] for x in _fails(lines)] == [
        "FAIL manifest-consistent tier=core",
        "FAIL idk-floor tier=core",
    ]
    assert f"answering IDK to all {n} questions scores 100.0% weighted" in _fails(lines)[1]


def test_tiny_wrong_content_hash(tiny, capsys):
    p = tiny / "turns_medium.jsonl"
    p.write_bytes(p.read_bytes() + b"\n")  # a blank line: same turns, different bytes
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    (line,) = _fails(lines)
    assert line.startswith("FAIL manifest-hash: content_hash sha256:")


def test_tiny_malformed_line_exit_2(tiny, capsys):
    p = tiny / "turns_medium.jsonl"
    rows = p.read_text(encoding="utf-8").splitlines()
    bad = json.loads(rows[9])
    bad["session_id"] = [bad["session_id"]]
    rows[9] = json.dumps(bad)
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, lines, err = _cli(capsys, tiny)
    assert code == 2 and lines == []
    assert err.splitlines() == [f"memeval audit: error: {p}:10: field 'session_id': expected int or str, got list"]


def test_tiny_broken_photo(tiny, capsys):
    rows = _rows(tiny / "turns_core.jsonl") + _rows(tiny / "turns_full.jsonl")
    img = next(r["image"] for r in rows if r.get("image"))
    (tiny / img).write_bytes(b"not a png")
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    fails = _fails(lines)
    assert fails and all(
        x.startswith("FAIL images-resolve tier=") and f"image {img!r} is not a readable image" in x for x in fails
    )
    (tiny / img).unlink()
    code, lines, _ = _cli(capsys, tiny)
    assert all(x.endswith("not found in the bench folder") for x in _fails(lines))


def test_imported_book_suite_per_question_haystacks(tmp_path):
    """A real imported bench (one haystack per case, no tiers to nest): the structure checks pass and
    every answerable case without evidence turns is a case without gold facts, counted as expected for
    this suite (issue 14), not named as a failure."""
    from booksuite_paths import SUITE

    from memeval.bench.loaders import import_bench

    out = tmp_path / "bs"
    import_bench("booksuite", [SUITE], out)
    (tier,) = load_bench(out).tiers
    qs = _rows(out / tier.questions_file)
    no_evidence = {
        q["id"]
        for q in qs
        if not q.get("evidence_turns")
        and q.get("expect", "answer") == "answer"
        and q["axis"] not in ("ABSTAIN", "FALSE_MEMORY")
    }
    assert {r.get("haystack") for r in _rows(out / tier.turns_file)} >= {q["haystack"] for q in qs}
    r = audit(out, max_findings=1000)
    for c in ("manifest-hash", "manifest-consistent", "ids-unique", "dates-chronological", "images-resolve"):
        assert r.check(c).status == "pass", c
    assert r.check("tiers-nested").status == "skip"
    assert no_evidence and all(q["has_gold"] is False for q in qs if q["id"] in no_evidence)
    assert not [f for f in r.findings if f.check == "evidence-resolves"]
    check = r.check("evidence-resolves")
    assert check.status == "pass" and check.numbers["no_gold_expected"] == len(no_evidence)
    assert f"{len(no_evidence)} cases without gold facts" in check.note


def test_imported_longmemeval_tiers_nest_per_question_haystack(tmp_path):
    """LongMemEval oracle and s files (written here in the real shape): the haystack of each question
    nests across tiers; a computed gold ("3" from 2 cats and 1 dog) is named as not in its evidence."""
    from memeval.bench.loaders.longmemeval import import_longmemeval

    def inst(qid, qtype, answer, sessions, dates, answer_ids):
        return {
            "question_id": qid,
            "question_type": qtype,
            "question": "?",
            "answer": answer,
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": [s for s, _ in sessions],
            "haystack_dates": dates,
            "haystack_sessions": [turns for _, turns in sessions],
            "answer_session_ids": answer_ids,
        }

    car = (
        "car",
        [
            {"role": "user", "content": "My car is blue.", "has_answer": True},
            {"role": "assistant", "content": "Noted!"},
        ],
    )
    cats = ("cats", [{"role": "user", "content": "I own 2 cats.", "has_answer": True}])
    dog = ("dog", [{"role": "user", "content": "And 1 dog.", "has_answer": True}])
    chat = (
        "chat",
        [
            {"role": "user", "content": "Any tips for sourdough?"},
            {"role": "assistant", "content": "Feed the starter daily."},
        ],
    )
    oracle = [
        inst("q1", "single-session-user", "blue", [car], ["2023/05/03 (Wed) 11:00"], ["car"]),
        inst(
            "q2", "multi-session", 3, [cats, dog], ["2023/01/01 (Sun) 09:00", "2023/01/05 (Thu) 09:00"], ["cats", "dog"]
        ),
    ]
    s = [
        inst(
            "q1",
            "single-session-user",
            "blue",
            [chat, car],
            ["2023/04/01 (Sat) 10:00", "2023/05/03 (Wed) 11:00"],
            ["car"],
        ),
        inst(
            "q2",
            "multi-session",
            3,
            [cats, chat, dog],
            ["2023/01/01 (Sun) 09:00", "2023/01/02 (Mon) 09:00", "2023/01/05 (Thu) 09:00"],
            ["cats", "dog"],
        ),
    ]
    paths = []
    for name, data in (("longmemeval_oracle.json", oracle), ("longmemeval_s.json", s)):
        (tmp_path / name).write_text(json.dumps(data), encoding="utf-8")
        paths.append(tmp_path / name)
    out = tmp_path / "lme"
    import_longmemeval(paths, out)
    r = audit(out)
    assert r.tiers == ("oracle", "s")
    assert r.check("tiers-nested").status == "pass"
    assert r.check("tiers-nested").numbers["turns_compared"] == 4  # oracle: 2 turns for q1, 2 for q2
    assert r.check("story-identical").status == "pass"
    assert [f.line() for f in r.findings if f.check == "evidence-contains-gold"] == [
        f"FAIL evidence-contains-gold tier={t} q2: gold '3' not in evidence turns {ev}"
        for t, ev in (("oracle", [1, 2]), ("s", [1, 4]))
    ]


def test_idk_answer_is_asked_in_the_question_language(tmp_path, monkeypatch):
    from memeval import audit as audit_mod
    from memeval.scoring import idk

    def questions(pos):
        qs = _questions(pos)
        return qs + [
            _q(f"X{lang}", "XLING_QUERY", "Okafor", [pos[0]], query_lang=lang, question=f"¿{lang}?")
            for lang in ("es", "ar", "ja")
        ]

    root = _write_bench(tmp_path / "x", questions=questions)
    asked: list[str] = []
    real = audit_mod.IDK_ANSWERS
    monkeypatch.setattr(idk, "is_idk", lambda text: asked.append(text) or text != real["ar"])
    r = audit(root, ["core"])
    assert set(asked) >= {real["en"], real["es"], real["ar"], real["ja"]}
    assert [f.line() for f in r.findings] == [
        f"FAIL idk-floor tier=core: the scorer does not recognise {real['ar']!r} (ar) as IDK"
    ]


# ---------------------------------------------------------------------------------------------
# Named question sets (the generated bench's 'probes'): checked like the main file, bars apply to main.


def test_tiny_probe_set_is_audited_and_idk_reported_not_failed(tiny_master):
    r = audit(tiny_master)
    assert r.passed, r.summary()
    idk = r.check("idk-floor").numbers
    for t in ("core", "small", "medium", "full"):
        # every probe expects "I don't know": 100% by design, reported but not a failure
        assert idk[f"{t}/probes"] == {"weighted": 1.0, "unweighted": 1.0, "n": 9}
        assert idk[t]["weighted"] <= 0.20
    assert r.check("ids-unique").numbers["questions/probes"] == 4 * 9


def test_tiny_probe_with_unresolvable_evidence_fails_naming_set_and_question(tiny, capsys):
    rows = _rows(tiny / "probes_small.jsonl")
    qid = rows[2]["id"]
    n = len(_rows(tiny / "turns_small.jsonl"))
    _edit_lines(
        tiny / "probes_small.jsonl",
        lambda rows: [{**r, "evidence_turns": [n + 7]} if r["id"] == qid else r for r in rows],
    )
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    assert _fails(lines) == [
        f"FAIL evidence-resolves tier=small set=probes {qid}: evidence turns [{n + 7}] not in "
        f"the tier's turns, which end at turn {n}"
    ]


def test_tiny_probe_id_repeated_and_changed_across_tiers(tiny, capsys):
    rows = _rows(tiny / "probes_medium.jsonl")
    first, second = rows[0]["id"], rows[1]["id"]
    _edit_lines(
        tiny / "probes_medium.jsonl", lambda rows: [{**r, "id": first} if r["id"] == second else r for r in rows]
    )
    _edit_lines(
        tiny / "probes_full.jsonl", lambda rows: [{**r, "axis": "ABSTAIN"} if r["id"] == first else r for r in rows]
    )
    _rehash(tiny)
    code, lines, _ = _cli(capsys, tiny)
    assert code == 1
    fails = _fails(lines)
    assert (
        f"FAIL ids-unique tier=medium set=probes {first}: probes_medium.jsonl:2: question id repeats "
        f"(first at line 1)" in fails
    )
    assert any(x.startswith(f"FAIL story-identical tier=full set=probes {first}: axis/gold ABSTAIN") for x in fails)
    assert {x.split()[1] for x in fails} == {"ids-unique", "story-identical"}


@needs_glasshouse
def test_difficulty_measures_glasshouse_core_from_the_shared_files():
    """glasshouse's figures are measured on its core files (not quoted): overlap and gold-in-evidence
    near issue 13's 0.376 / 39%, and memeval's bm25 (the audit's probe) finds an evidence turn in its
    top 10 for at least the 51.9% glasshouse's own tokenisation reaches (issue 22)."""
    from memeval.audit.difficulty import content_words, glasshouse_core

    m = glasshouse_core(GLASSHOUSE)
    assert isinstance(m, dict) and m["measured_on"] == str(GLASSHOUSE.resolve())
    assert m["n_text"] == 580 and m["n_bm25"] == 605
    assert abs(m["overlap"] - 0.376) < 0.01 and abs(m["gold_in_ev"] - 0.39) < 0.03
    assert m["bm25_ev_top10"] >= 0.519
    assert 0.25 < m["bm25_top10"] < 0.45
    assert content_words("Where is THE plot, it's 25 min?") == ["plot", "25", "min"]


def test_difficulty_is_a_report_and_says_not_available_without_glasshouse(bench, tmp_path, monkeypatch):
    """Without glasshouse's files the entry says so (no fixed figures stand in); the entry is a
    REPORT, never a PASS; a tier with many haystacks says it was not measured."""
    monkeypatch.setenv("MEMEVAL_GLASSHOUSE", str(tmp_path / "nowhere"))
    r = audit(bench)
    c = r.check("difficulty")
    assert c.status == "report"
    gh = c.numbers["glasshouse_core"]
    assert isinstance(gh, str) and gh.startswith("not available") and "nowhere" in gh
    assert any(line.startswith("  REPORT difficulty") for line in r.lines())
    assert not any(line.startswith("  PASS difficulty") for line in r.lines())
