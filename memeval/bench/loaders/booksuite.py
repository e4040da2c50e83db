"""The book suite ("AI Agents in Depth", chapter 3): read its YAML cases and convert them to a bench.

Source layout (``external-formats.md``)::

    DIR/test_cases/layer{1,2,3}/*.yaml     one case per file (file names need not match test_id)
    DIR/fixtures/gold_facts.json           {test_id: {"required_facts": [str | [variants]]}}  (optional)

Conversion (one haystack per case, ``haystack = test_id``):

- each ``conversation_histories`` entry is a session: ``session_id = conversation_id``, ``date`` =
  the day of its ``timestamp`` (time of day is dropped; sessions are put in timestamp order, ties kept
  in file order, since systems ingest chronologically and one shipped case lists them out of order);
- each message is a turn: ``speaker = role``, ``text = content``; turn ids restart at 1 per haystack;
- one question per case: ``id = test_id``, ``question_en = user_question``, ``asked_at`` = the day
  after the last session, ``axis`` from the layer (:data:`LAYER_AXES`);
- where gold facts exist: ``gold_parts`` = each fact's first variant, ``gold_answer`` = those joined
  with "; " (an approximation for the dry ruler only), ``evidence_turns``/``evidence_sessions`` =
  the turns in which some variant occurs (keyword-recall normalisation; derived, not annotated by
  the source), and the exact fact list in the extra field ``required_facts``;
- extra fields: ``layer``, ``title``, ``description``, ``evaluation_criteria``,
  ``expected_behavior`` (when present), ``source_file``, ``has_gold``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping


from ...errors import InputError, UnknownName
from ...text.fold import fold_case_space
from .booksuite_answers import answers_from_run, read_answers, read_responses
from .booksuite_model import (
    LAYER_AXES,
    LAYER_TITLES,
    LAYERS,
    BENCH_NAME,
    LICENSE,
    QUESTIONS_FILE,
    SOURCE,
    TIER,
    TURNS_FILE,
    BookCase,
    Fact,
    History,
    Message,
    facts_as_json,
    read_gold_facts,
)
from ..files import loads_yaml, read_text
from ..io import save_bench, write_questions, write_turns
from ._common import staged_output
from ..model import Bench, Question, Tier, Turn
from ..tokens import TOKENIZER, count_tokens

__all__ = [
    "LAYERS",
    "LAYER_AXES",
    "LAYER_TITLES",
    "Message",
    "History",
    "BookCase",
    "BookSuite",
    "read_case",
    "load_booksuite",
    "import_booksuite",
    "bench_rows",
    "read_responses",
    "read_answers",
    "answers_from_run",
]

_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2})?))?$")


@dataclass(frozen=True)
class BookSuite:
    root: str
    cases: tuple[BookCase, ...]
    gold: Mapping[str, tuple[Fact, ...]] = field(default_factory=dict)

    def case(self, test_id: str) -> BookCase:
        for c in self.cases:
            if c.test_id == test_id:
                return c
        raise UnknownName(test_id)

    @property
    def layer_of(self) -> dict[str, str]:
        return {c.test_id: c.layer for c in self.cases}

    def write_bench(self, out_dir) -> Bench:
        return _write_bench(self, out_dir)


# --- reading the YAML ---------------------------------------------------------------------------


def _opt_str(obj: dict, key: str, path, record) -> str | None:
    """``obj[key]`` if it is a string, None if it is absent; any other value is an error."""
    v = obj.get(key)
    if v is not None and not isinstance(v, str):
        raise InputError(path, record, key, f"expected a string, got {type(v).__name__}")
    return v


def _str(obj: dict, key: str, path, record) -> str:
    """``obj[key]``: a string that is present and not blank."""
    v = _opt_str(obj, key, path, record)
    if v is None:
        raise InputError(path, record, key, "missing")
    if not v.strip():
        raise InputError(path, record, key, "empty")
    return v


def _timestamp(v: Any, path, record) -> str:
    if isinstance(v, dt.datetime):  # an unquoted timestamp in YAML
        return v.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(v, dt.date):
        return v.isoformat()
    if not isinstance(v, str):
        raise InputError(
            path,
            record,
            "timestamp",
            "missing" if v is None else f"expected 'YYYY-MM-DD HH:MM:SS', got {type(v).__name__}",
        )
    m = _TIMESTAMP.match(v.strip())
    if not m:
        raise InputError(path, record, "timestamp", f"expected 'YYYY-MM-DD HH:MM:SS', got {v!r}")
    try:
        dt.date.fromisoformat(m.group(1))
    except ValueError:
        raise InputError(path, record, "timestamp", f"not a calendar date: {v!r}") from None
    return v.strip()


def _history(obj: Any, path, record: str) -> History:
    if not isinstance(obj, dict):
        raise InputError(path, record, None, "expected a mapping")
    cid = obj.get("conversation_id")
    if not isinstance(cid, (str, int)) or isinstance(cid, bool) or str(cid).strip() == "":
        raise InputError(path, record, "conversation_id", "missing or not a string")
    meta = obj.get("metadata") or {}
    if not isinstance(meta, dict):
        raise InputError(path, record, "metadata", "expected a mapping")
    msgs = obj.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise InputError(path, record, "messages", "expected a non-empty list")
    out = []
    for i, m in enumerate(msgs):
        rec = f"{record}.messages[{i}]"
        if not isinstance(m, dict):
            raise InputError(path, rec, None, "expected a mapping {role, content}")
        role = _str(m, "role", path, rec)
        content = m.get("content")
        if not isinstance(content, str):
            raise InputError(
                path,
                rec,
                "content",
                "missing" if "content" not in m else f"expected a string, got {type(content).__name__}",
            )
        out.append(Message(role, content))
    return History(str(cid), _timestamp(obj.get("timestamp"), path, record), tuple(out), meta)


#: parsed cases by the hash of their text, newest last: a suite read again (``compare`` after
#: ``import``, a notebook re-run) skips the YAML parse, ~30 ms a file; bounded, invalid files never kept
_PARSED: OrderedDict[bytes, BookCase] = OrderedDict()
_PARSED_MAX = 512
_PARSED_LOCK = threading.Lock()


def read_case(path) -> BookCase:
    """Read and validate one case file; errors name the file, the record and the field.

    A file whose text was read before (any path) is not parsed again: the case is the earlier one
    with this ``source_file``."""
    path = Path(path)
    text = read_text(path)
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
    with _PARSED_LOCK:
        hit = _PARSED.get(key)
        if hit is not None:
            _PARSED.move_to_end(key)
    if hit is not None:
        return replace(hit, source_file=str(path))
    case = _parse_case(loads_yaml(text, path), path)
    with _PARSED_LOCK:
        _PARSED[key] = case
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)
    return case


def _parse_case(obj: Any, path: Path) -> BookCase:
    if not isinstance(obj, dict):
        raise InputError(path, None, None, "expected a mapping (one test case per file)")
    test_id = _str(obj, "test_id", path, None)
    rec = test_id
    layer = _str(obj, "category", path, rec)
    if layer not in LAYERS:
        raise InputError(path, rec, "category", f"expected one of {', '.join(LAYERS)}, got {layer!r}")
    hist_raw = obj.get("conversation_histories")
    if not isinstance(hist_raw, list) or not hist_raw:
        raise InputError(path, rec, "conversation_histories", "expected a non-empty list")
    histories = tuple(_history(h, path, f"{rec}.conversation_histories[{i}]") for i, h in enumerate(hist_raw))
    seen: set[str] = set()
    for i, h in enumerate(histories):
        if h.conversation_id in seen:
            raise InputError(
                path, f"{rec}.conversation_histories[{i}]", "conversation_id", f"duplicate {h.conversation_id!r}"
            )
        seen.add(h.conversation_id)
    return BookCase(
        test_id=test_id,
        layer=layer,
        title=_opt_str(obj, "title", path, rec) or "",
        description=_opt_str(obj, "description", path, rec) or "",
        histories=histories,
        user_question=_str(obj, "user_question", path, rec),
        evaluation_criteria=_str(obj, "evaluation_criteria", path, rec),
        expected_behavior=_opt_str(obj, "expected_behavior", path, rec),
        source_file=str(path),
    )


def _case_files(root: Path) -> list[Path]:
    base = root / "test_cases"
    if not base.is_dir():
        raise InputError(root, None, None, "no test_cases/ folder here (is this the book suite?)")
    files = sorted(p for p in base.glob("*/*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if not files:
        raise InputError(base, None, None, "no *.yaml case files under test_cases/*/")
    return files


def load_booksuite(src_dir, gold_path=None) -> BookSuite:
    """Read every case under ``src_dir/test_cases/*/`` and the gold facts (``fixtures/gold_facts.json``
    by default; optional). Duplicate test ids and gold for unknown cases are errors."""
    root = Path(src_dir)
    cases: list[BookCase] = []
    where: dict[str, Path] = {}
    for f in _case_files(root):
        c = read_case(f)
        if c.test_id in where:
            raise InputError(f, c.test_id, "test_id", f"duplicate test_id (also in {where[c.test_id]})")
        where[c.test_id] = f
        cases.append(c)
    gpath = Path(gold_path) if gold_path else root / "fixtures" / "gold_facts.json"
    gold = {}
    if gold_path or gpath.is_file():
        gold = read_gold_facts(gpath)
        for tid in gold:
            if tid not in where:
                raise InputError(gpath, tid, None, "gold facts for a test_id that is not in the suite")
    return BookSuite(str(root), tuple(cases), gold)


# --- conversion to a bench ----------------------------------------------------------------------


def _fact_turns(facts: tuple[Fact, ...], turns: list[Turn]) -> list[Turn]:
    variants = [fold_case_space(v) for f in facts for v in f]
    folded = ((t, fold_case_space(t.text)) for t in turns)  # each turn folded once, not once per variant
    return [t for t, text in folded if any(v in text for v in variants)]


def bench_rows(suite: BookSuite) -> tuple[list[Turn], list[Question]]:
    """All turns (one haystack per case) and one question per case, in suite order."""
    turns: list[Turn] = []
    questions: list[Question] = []
    for c in suite.cases:
        mine: list[Turn] = []
        for h in c.sessions:
            for m in h.messages:
                mine.append(Turn(len(mine) + 1, h.conversation_id, m.role, m.content, h.date, haystack=c.test_id))
        turns.extend(mine)
        facts = suite.gold.get(c.test_id)
        extra: dict[str, Any] = {
            "layer": c.layer,
            "title": c.title,
            "description": c.description,
            "evaluation_criteria": c.evaluation_criteria,
        }
        if c.expected_behavior is not None:
            extra["expected_behavior"] = c.expected_behavior
        extra["has_gold"] = facts is not None
        gold: dict[str, Any] = {}
        if facts:
            extra["required_facts"] = facts_as_json(facts)
            hits = _fact_turns(facts, mine)
            parts = tuple(f[0] for f in facts)
            gold = {
                "gold_answer": "; ".join(parts),
                "gold_parts": parts,
                "evidence_turns": tuple(t.turn_id for t in hits),
                "evidence_sessions": tuple(dict.fromkeys(t.session_id for t in hits)),
            }
        extra["source_file"] = Path(c.source_file).name
        questions.append(
            Question(
                id=c.test_id,
                axis=LAYER_AXES[c.layer],
                question_en=c.user_question,
                asked_at=c.asked_at,
                haystack=c.test_id,
                extra=extra,
                **gold,
            )
        )
    return turns, questions


def _write_bench(suite: BookSuite, out_dir) -> Bench:
    out = Path(out_dir)
    turns, questions = bench_rows(suite)  # everything validated before the first write
    out.mkdir(parents=True, exist_ok=True)
    write_turns(out / TURNS_FILE, turns)
    write_questions(out / QUESTIONS_FILE, questions)
    lic = Path(suite.root) / "LICENSE"
    if lic.is_file():
        shutil.copyfile(lic, out / "LICENSE")
    tier = Tier(
        TIER,
        TURNS_FILE,
        QUESTIONS_FILE,
        n_turns=len(turns),
        n_sessions=len({(t.haystack, t.session_id) for t in turns}),
        n_tokens=sum(count_tokens(t.text) for t in turns),
        n_questions=len(questions),
    )
    bench = Bench(
        name=BENCH_NAME,
        version="ch3-4a8df46",
        tiers=(tier,),
        root=str(out),
        license=LICENSE,
        source=SOURCE,
        tokenizer=TOKENIZER,
        axis_map=dict(LAYER_AXES),
        extra={
            "haystacks": "one per question (haystack = test_id)",
            "gold": f"fixtures/gold_facts.json: {len(suite.gold)} of {len(suite.cases)} cases; "
            "metric keyword-recall (memeval compare)",
        },
    )
    save_bench(bench, out)
    return bench


def import_booksuite(src_dir, out_dir, gold_path=None, *, force: bool = False) -> Bench:
    """Read the suite at ``src_dir`` and write a memeval bench folder at ``out_dir``, all or nothing
    (staged beside it and renamed into place; a non-empty ``out_dir`` is replaced only with ``force``)."""
    suite = load_booksuite(src_dir, gold_path)  # every case validated before anything is written
    with staged_output(out_dir, force) as tmp:
        bench = suite.write_bench(tmp)
    return replace(bench, root=str(out_dir))
