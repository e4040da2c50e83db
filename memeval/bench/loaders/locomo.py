"""LoCoMo (snap-research/locomo) → a bench: one haystack per conversation, one tier.

Category numbers follow the dataset file, not the order the paper introduces them in (a known
source of swapped per-category results): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial. This is the mapping the official evaluation code implies (category 1 is scored by
partial F1 over sub-answers, i.e. multi-hop; category 2 gets the "use the date of the conversation"
hint, i.e. temporal; snap-research/locomo issue #29), and it matches the per-category counts
282 / 321 / 96 / 841 / 446 of ``locomo10.json``. Adversarial questions are kept, scored as
abstention (``expect: no_memory``) and flagged with ``locomo_category: 5`` so that analysis reports
them on their own line.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ...errors import BenchContractError, InputError, MemevalError
from ..io import file_sha256, save_bench, write_questions, write_turns
from ..model import Bench, Question, Turn
from ..tokens import TOKENIZER
from ._common import SourceRecord, TierCounter, staged_output
from ._jsonstream import iter_json_array

__all__ = ["CATEGORY_AXIS", "AXIS_MAP", "import_locomo", "convert_sample", "parse_date"]

CATEGORY_AXIS: dict[int, str] = {1: "MULTI", 2: "TEMPORAL", 3: "IMPLICIT", 4: "BASIC", 5: "ABSTAIN"}
CATEGORY_NAME: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
AXIS_MAP: dict[str, str] = {f"{k} {CATEGORY_NAME[k]}": v for k, v in CATEGORY_AXIS.items()}
LICENSE = "CC BY-NC 4.0"
SOURCE = "https://github.com/snap-research/locomo"
NOTES = [
    "category numbers as in the data file: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, "
    "5 adversarial (the paper lists them in another order; see snap-research/locomo issue #29)",
    "open-domain (3) questions need world knowledge or inference beyond the transcript: mapped to IMPLICIT",
    "adversarial (5) questions are kept, scored as abstention (expect no_memory) and flagged with "
    "locomo_category 5; report them on their own line. Their trap answer is kept as adversarial_answer",
    "evidence dia_ids that do not resolve to a turn (annotation slips in the source) are kept in "
    "unresolved_evidence, counted in this manifest, never silently dropped",
    "image turns: image = img_url (first URL); blip_caption is appended to the text as LoCoMo's own "
    "evaluation shows it ('<text> and shared <caption>'), so systems see it, and kept in caption too",
    "questions are dated (asked_at) at the last session of their conversation",
]

_DIA = re.compile(r"D\s*(\d{1,9})\s*:\s*(\d{1,9})(?!\d)")  # bounded: ids are small numbers
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y", "%I:%M %p on %d %B %Y")


def parse_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → datetime(2023, 5, 8, 13, 56)."""
    s = " ".join(str(text).split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(s, fmt)
        except ValueError:
            pass
    raise BenchContractError(f"expected a date like '1:56 pm on 8 May, 2023', got {text!r}")


def _dia_key(dia_id: str) -> tuple[int, int] | None:
    m = _DIA.fullmatch(dia_id.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def convert_sample(obj: Any, path="<json>", index: int = 0) -> tuple[list[Turn], list[Question], dict]:
    """One LoCoMo conversation → (turns, questions, counts of source slips)."""
    r = SourceRecord(path, index, obj, "sample_id")
    if not isinstance(obj, dict):
        raise r.err(None, f"expected a JSON object, got {type(obj).__name__}")
    hay = str(r.get(obj, "sample_id", (str, int), "sample_id"))
    conv = r.get(obj, "conversation", dict, "conversation")
    for k in ("speaker_a", "speaker_b"):
        r.get(conv, k, str, f"conversation.{k}")
    numbers = sorted(int(m.group(1)) for k in conv for m in [_SESSION_KEY.match(k)] if m)
    if not numbers:
        raise r.err("conversation", "no session_N lists")

    turns: list[Turn] = []
    by_dia: dict[tuple[int, int], int] = {}
    last_date = None
    duplicates = out_of_order = 0
    for n in numbers:
        key = f"session_{n}"
        sess = r.get(conv, key, list, f"conversation.{key}")
        if not sess:
            continue  # a dated slot with no turns
        raw_date = r.get(conv, f"{key}_date_time", str, f"conversation.{key}_date_time")
        try:
            when = parse_date(raw_date)
        except ValueError as e:
            raise r.err(f"conversation.{key}_date_time", str(e)) from None
        if last_date and when < last_date:
            out_of_order += 1  # kept in the source's order; counted in the manifest, flagged by the audit
        last_date = max(when, last_date or when)
        for j, t in enumerate(sess):
            where = f"conversation.{key}[{j}]"
            if not isinstance(t, dict):
                raise r.err(where, f"expected an object, got {type(t).__name__}")
            speaker = r.get(t, "speaker", str, f"{where}.speaker")
            dia = r.get(t, "dia_id", str, f"{where}.dia_id")
            text = r.get(t, "text", str, f"{where}.text")
            img = t.get("img_url")
            if isinstance(img, list):
                img = next((u for u in img if isinstance(u, str) and u), None)
            elif img is not None and not isinstance(img, str):
                raise r.err(f"{where}.img_url", f"expected a URL or a list of URLs, got {type(img).__name__}")
            cap = t.get("blip_caption")
            if cap is not None and not isinstance(cap, str):
                raise r.err(f"{where}.blip_caption", f"expected str, got {type(cap).__name__}")
            tid = len(turns) + 1
            if cap:  # systems see the caption with the turn, as LoCoMo's evaluation shows it
                text = f"{text} and shared {cap}"
            turns.append(
                Turn(
                    turn_id=tid,
                    session_id=n,
                    speaker=speaker,
                    text=text,
                    date=when.date().isoformat(),
                    image=img or None,
                    caption=cap or None,
                    haystack=hay,
                )
            )
            dk = _dia_key(dia)
            if dk is None:
                raise r.err(f"{where}.dia_id", f"expected an id like 'D1:3', got {dia!r}")
            if dk in by_dia:
                duplicates += 1
            else:
                by_dia[dk] = tid
    if not turns:
        raise r.err("conversation", "every session is empty")
    assert last_date is not None  # set by every session that holds turns

    qa = r.get(obj, "qa", list, "qa")
    questions: list[Question] = []
    unresolved_total = 0
    session_of = {t.turn_id: t.session_id for t in turns}
    for i, item in enumerate(qa):
        where = f"qa[{i}]"
        if not isinstance(item, dict):
            raise r.err(where, f"expected an object, got {type(item).__name__}")
        question = r.get(item, "question", str, f"{where}.question")
        cat = r.get(item, "category", int, f"{where}.category")
        if cat not in CATEGORY_AXIS:
            raise r.err(f"{where}.category", f"expected 1..5, got {cat}")
        ev_raw = item.get("evidence", [])
        if not isinstance(ev_raw, list) or any(not isinstance(e, str) for e in ev_raw):
            raise r.err(f"{where}.evidence", "expected a list of dia_id strings")
        ev, unresolved = [], []
        for ref in ev_raw:
            keys = [(int(a), int(b)) for a, b in _DIA.findall(ref)]
            if not keys:
                unresolved.append(ref)
            for dk in keys:
                if dk in by_dia:
                    ev.append(by_dia[dk])
                else:
                    unresolved.append(f"D{dk[0]}:{dk[1]}")
        ev = sorted(set(ev))
        extra: dict[str, Any] = {"locomo_category": cat, "evidence_dia_ids": ev_raw}
        if cat == 5:
            gold = ""
            for k in ("adversarial_answer", "answer"):
                if item.get(k) is not None:
                    extra[k] = item[k]
        else:
            gold = r.get(item, "answer", (str, int, float), f"{where}.answer")
        if unresolved:
            extra["unresolved_evidence"] = unresolved
            unresolved_total += len(unresolved)
        abstain = cat == 5
        questions.append(
            Question(
                id=f"{hay}-q{i + 1}",
                axis=CATEGORY_AXIS[cat],
                question_en=question,
                gold_answer=str(gold),
                expect="no_memory" if abstain else "answer",
                evidence_turns=() if abstain else tuple(ev),
                evidence_sessions=() if abstain else tuple(sorted({session_of[t] for t in ev})),
                asked_at=last_date.date().isoformat(),
                haystack=hay,
                extra=extra,
            )
        )
    return (
        turns,
        questions,
        {
            "unresolved_evidence": unresolved_total,
            "duplicate_dia_ids": duplicates,
            "sessions_out_of_date_order": out_of_order,
        },
    )


def import_locomo(paths, out, *, name: str = "locomo", force: bool = False) -> Bench:
    """Convert a LoCoMo file (``locomo10.json``) into a one-tier bench folder at ``out``."""
    paths = [Path(p) for p in paths]
    if len(paths) != 1:
        raise MemevalError(f"locomo: give exactly one file (locomo10.json), got {len(paths)}")
    src = paths[0]
    if not src.is_file():
        raise InputError(src, None, None, "no such file")
    all_turns: list[Turn] = []
    all_qs: list[Question] = []
    slips = {"unresolved_evidence": 0, "duplicate_dia_ids": 0, "sessions_out_of_date_order": 0}
    seen: set[str | None] = set()
    per_cat = {k: 0 for k in CATEGORY_AXIS}
    for index, obj in iter_json_array(src):
        turns, qs, s = convert_sample(obj, src, index)
        hay = turns[0].haystack
        if hay in seen:
            raise InputError(src, f"{index} (sample_id {hay!r})", "sample_id", "duplicate sample_id")
        seen.add(hay)
        all_turns += turns
        all_qs += qs
        for k in slips:
            slips[k] += s[k]
        for q in qs:
            per_cat[q.extra["locomo_category"]] += 1
    if not all_qs:
        raise InputError(src, None, None, "no conversations with questions")
    with staged_output(out, force) as root:
        write_turns(root / "turns_all.jsonl", all_turns)
        write_questions(root / "questions_all.jsonl", all_qs)
        tier = TierCounter().add_all(all_turns).tier("all", "turns_all.jsonl", "questions_all.jsonl", len(all_qs))
        bench = Bench(
            name=name,
            version="1",
            tiers=(tier,),
            root=str(out),
            license=LICENSE,
            source=SOURCE,
            tokenizer=TOKENIZER,
            axis_map=AXIS_MAP,
            extra={
                "format": "locomo",
                "notes": NOTES,
                "source_files": {"all": {"file": src.name, "sha256": file_sha256(src)}},
                "questions_per_category": {f"{k} {CATEGORY_NAME[k]}": v for k, v in per_cat.items()},
                "source_slips": slips,
            },
        )
        save_bench(bench, root)
    return replace(bench, root=str(out))
