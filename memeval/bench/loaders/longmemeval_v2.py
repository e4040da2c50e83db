"""LongMemEval-V2 (xiaowu0162/LongMemEval-V2) → a bench: web-agent trajectories as memory, one tier.

The data folder holds ``questions.jsonl``, ``trajectories.jsonl`` (1.2 GB in the release),
``haystacks/lme_v2_{small,medium}.json`` (``{question_id: [ordered trajectory ids]}``), the
screenshots (``screenshots/<trajectory>/<n>.png``) and, where published, ``checksums.sha256``. One
import makes one tier (``small`` or ``medium``). Every distinct *ordered* haystack is one memory
build (small: 2, medium: 447), written once into the tier's turns file; the questions sharing it
name it. The build list is recorded in ``bench.yaml`` (``builds``), each build's ordered trajectory
ids in ``haystacks_<tier>.json`` (what ``memeval export longmemeval-v2`` writes back).

A trajectory becomes one session (its id is the session id): an overview turn (goal, start URL,
outcome, environment) and one turn per state, carrying ``state_index``, URL, thought, action and the
accessibility tree, with the state's screenshot as the turn's image (copied into the bench folder).
``--text-only`` drops every image (screenshots and question images) and marks the bench
non-official: the leaderboard's reader sees the screenshots.

``trajectories.jsonl`` is never held whole: one pass indexes each record's byte offset by id, then
each build reads its trajectories one at a time by seeking.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import orjson

from ...errors import InputError, MemevalError
from ..files import confined, is_file, iter_jsonl, loads_json, read_json
from ..io import file_sha256, save_bench, turn_lines
from ..model import Bench, Question, Turn
from ..tokens import TOKENIZER
from ._common import SourceRecord, TierCounter, copy_source, staged_output

__all__ = [
    "AXIS_MAP",
    "QUESTION_TYPES",
    "TIERS",
    "DATE",
    "import_longmemeval_v2",
    "index_trajectories",
    "trajectory_turns",
    "build_id",
    "verify_checksums",
    "EVAL_FUNCTIONS",
    "EvalSpecError",
    "parse_spec",
]

QUESTION_TYPES = (
    "static-environment",
    "static-environment-abs",
    "dynamic-environment",
    "dynamic-environment-abs",
    "procedure",
    "procedure-abs",
    "errors-gotchas",
)
#: question_type → axis: static state recall BASIC, dynamic state tracking UPDATE, workflow knowledge
#: MULTI (steps across a trajectory), gotchas IMPLICIT; every ``-abs`` type (premise awareness) is
#: FALSE_MEMORY: the question carries a premise the environment contradicts.
AXIS_MAP: dict[str, str] = {
    "static-environment": "BASIC",
    "dynamic-environment": "UPDATE",
    "procedure": "MULTI",
    "errors-gotchas": "IMPLICIT",
    "*-abs": "FALSE_MEMORY",
}
DOMAINS = ("web", "enterprise")
TIERS = ("small", "medium")
#: trajectories carry no dates; every turn gets this one (order is the haystack's order)
DATE = "2026-01-01"
LICENSE = "MIT (code); see the dataset card for the data"
SOURCE = "https://github.com/xiaowu0162/LongMemEval-V2"
SPEAKER = "agent"
NOTES = [
    "one tier per import (--tier small|medium); each distinct ordered haystack is one memory build, "
    "listed under builds (question ids per build)",
    "a trajectory is one session (session id = trajectory id): an overview turn, then one turn per state "
    "(state_index, url, thought, action, accessibility tree) with its screenshot as the turn's image",
    "trajectories carry no dates: every turn is dated " + DATE + "; the haystack order is the ingest order",
    "questions carry no evidence annotation: retrieval metrics and the oracle's evidence are empty",
    "official scoring: the question's eval_function on the reader's last \\boxed{} answer (UNKNOWN is "
    "wrong), the two LLM rubrics on the full response (memeval.scoring.lme_v2)",
]

#: the published eval functions: four deterministic, two LLM rubrics (``memeval.scoring.lme_v2``)
EVAL_FUNCTIONS = (
    "norm_phrase_set_match",
    "norm_phrase_set_match_ordered",
    "mc_choice_match",
    "mc_choice_set_match",
    "llm_abstention_checker",
    "llm_gotchas_checker",
)
_CHECKSUMS = "checksums.sha256"
_SUM_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")


class EvalSpecError(MemevalError):
    """An ``eval_function`` that the published parser refuses (or whose function refuses its options)."""


def _value(key: str, raw: str) -> Any:
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if key in ("separators", "separator"):
        if not raw:
            return []
        s = raw.strip()
        if s.startswith("[") and s.endswith("]"):
            try:
                return json.loads(s)
            except ValueError as e:
                raise EvalSpecError(f"separators {s!r}: not a JSON list ({e})") from None
        return [c for c in raw if not c.isspace()]
    try:
        return float(raw) if "." in raw else int(raw)
    except ValueError:
        return raw


def parse_spec(spec: Any) -> tuple[str, dict[str, Any]]:
    """``"name|key=value|..."`` → (name, options), as the published parser reads it.

    >>> parse_spec("norm_phrase_set_match_ordered| separators=; |lower=false")
    ('norm_phrase_set_match_ordered', {'separators': [';'], 'lower': False})
    >>> parse_spec("exact|x")
    Traceback (most recent call last):
    memeval.bench.loaders.longmemeval_v2.EvalSpecError: unknown eval function: exact
    """
    if not spec or not isinstance(spec, str):
        raise EvalSpecError("eval function spec must be a non-empty string")
    parts = [p.strip() for p in spec.split("|")]
    name = parts[0]
    if not name:
        raise EvalSpecError("eval function spec missing function name")
    if name not in EVAL_FUNCTIONS:
        raise EvalSpecError(f"unknown eval function: {name}")
    opts: dict[str, Any] = {}
    for part in parts[1:]:
        if not part:
            continue
        if "=" not in part:
            raise EvalSpecError(f"invalid eval function option: {part}")
        k, v = part.split("=", 1)
        k, v = k.strip(), v.strip()
        if not k:
            raise EvalSpecError(f"invalid eval function option: {part}")
        if k in opts:
            raise EvalSpecError(f"duplicate eval function option: {k}")
        opts[k] = _value(k, v)
    return name, opts


def build_id(trajectory_ids) -> str:
    """An opaque id for one ordered haystack: the same ids in another order are another build.

    >>> build_id(["a", "b"]) == build_id(["a", "b"]), build_id(["a", "b"]) == build_id(["b", "a"])
    (True, False)
    """
    h = hashlib.sha256("\0".join(trajectory_ids).encode("utf-8")).hexdigest()
    return "lmev2-" + h[:12]


def verify_checksums(root: Path, *, skip_images: bool = False) -> int:
    """Check every file ``checksums.sha256`` names (``sha256sum`` lines); returns how many were checked
    (0 when the folder has no such file). A mismatch or a missing file is an :class:`InputError`
    naming the line; with ``skip_images`` missing screenshots/images are allowed (``--text-only``)."""
    path = root / _CHECKSUMS
    if not is_file(path):
        return 0
    checked = 0
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        m = _SUM_LINE.match(line.rstrip("\r"))
        if not m:
            raise InputError(path, n, None, "expected '<sha256>  <path>'")
        digest, rel = m.group(1).lower(), m.group(2)
        target = confined(root, rel, path, n, rel)
        if not is_file(target):
            if skip_images and rel.lower().endswith((".png", ".jpg", ".jpeg", ".webp", ".gif")):
                continue
            raise InputError(path, n, rel, "file listed but missing")
        if file_sha256(target) != digest:
            raise InputError(path, n, rel, "sha256 does not match the file")
        checked += 1
    return checked


def index_trajectories(path: Path) -> dict[str, tuple[int, int, str]]:
    """One pass over ``trajectories.jsonl``: ``{id: (byte offset, length, domain)}``. Each line is
    parsed once (orjson) and dropped; nothing else is kept."""
    out: dict[str, tuple[int, int, str]] = {}
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise InputError(path, None, None, f"cannot open: {e.strerror}") from None
    with fh:
        offset, n = 0, 0
        for raw in fh:
            n += 1
            size = len(raw)
            if raw.strip():
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    obj = _parse_line(raw, path, n)
                if not isinstance(obj, dict):
                    raise InputError(path, n, None, f"expected a JSON object, got {type(obj).__name__}")
                tid = obj.get("id")
                if not isinstance(tid, str) or not tid:
                    raise InputError(path, n, "id", "missing or not a non-empty string")
                if tid in out:
                    raise InputError(path, n, "id", f"duplicate trajectory id {tid!r}")
                dom = obj.get("domain")
                out[tid] = (offset, size, dom if isinstance(dom, str) else "")
            offset += size
    return out


def _parse_line(raw: bytes, path, n):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, n, None, f"not UTF-8 text ({e.reason})") from None
    return loads_json(text, path, n)


def _read_at(fh, path, entry: tuple[int, int, str], line: int | None = None):
    fh.seek(entry[0])
    raw = fh.read(entry[1])
    try:
        return orjson.loads(raw)  # read once by the index pass already: valid JSON, UTF-8
    except orjson.JSONDecodeError:  # the file changed under us: the full reader names the fault
        return _parse_line(raw, path, line)


def _opt_str(r: SourceRecord, obj: dict, key: str, field: str) -> str | None:
    v = obj.get(key)
    if v is not None and not isinstance(v, str):
        raise r.err(field, f"expected str or null, got {type(v).__name__}")
    return v


def trajectory_turns(
    obj: Any, path, record: str, *, first_turn_id: int, haystack: str, images: dict[str, str] | None
) -> list[Turn]:
    """One trajectory → its session's turns (overview first). ``images``: screenshot value → its path
    in the bench folder (None: text only)."""
    r = SourceRecord(path, 0, obj, "id")
    r.label = record
    if not isinstance(obj, dict):
        raise r.err(None, f"expected a JSON object, got {type(obj).__name__}")
    tid = r.get(obj, "id", str)
    goal_raw = obj.get("goal")
    if isinstance(goal_raw, list):  # the published loader joins a list of strings
        goal = " ".join(x.strip() for x in goal_raw if isinstance(x, str) and x.strip())
    elif isinstance(goal_raw, str):
        goal = goal_raw.strip()
    else:
        raise r.err("goal", f"expected str, got {type(goal_raw).__name__}")
    start_url = r.get(obj, "start_url", str)
    outcome = _opt_str(r, obj, "outcome", "outcome")
    env = _opt_str(r, obj, "environment", "environment")
    states = r.get(obj, "states", list)
    if not states:
        raise r.err("states", "empty: a trajectory has at least one state")
    head = (
        f"Trajectory {tid}\nEnvironment: {env or 'unknown'}\nGoal: {goal or '<goal not found>'}\n"
        f"Start URL: {start_url}\nOutcome: {outcome or 'unknown'}\nStates: {len(states)}"
    )
    turns = [Turn(first_turn_id, tid, SPEAKER, head, DATE, haystack=haystack)]
    for i, s in enumerate(states):
        where = f"states[{i}]"
        if not isinstance(s, dict):
            raise r.err(where, f"expected an object, got {type(s).__name__}")
        url = r.get(s, "url", str, f"{where}.url")
        action = _opt_str(r, s, "action", f"{where}.action")
        thought = _opt_str(r, s, "thought", f"{where}.thought")
        if thought is None and "thoughts" in s:
            thought = _opt_str(r, s, "thoughts", f"{where}.thoughts")
        tree_key = "accessibility_tree" if "accessibility_tree" in s else "text"
        tree = r.get(s, tree_key, str, f"{where}.{tree_key}")
        idx = s.get("state_index", s.get("step", i))
        if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
            raise r.err(f"{where}.state_index", f"expected an integer >= 0, got {idx!r}")
        shot = s.get("screenshot")
        if shot is not None and not isinstance(shot, str):
            raise r.err(f"{where}.screenshot", f"expected str, got {type(shot).__name__}")
        text = (
            f"Trajectory {tid}, state {idx}\nURL: {url}\nThought: {thought or ''}\nAction: {action or '(none)'}\n"
            f"Accessibility tree:\n{tree}"
        )
        image = images.get(shot) if images is not None and shot else None
        turns.append(
            Turn(
                first_turn_id + 1 + i,
                tid,
                SPEAKER,
                text,
                DATE,
                image=image,
                haystack=haystack,
            )
        )
    return turns


def _screenshot_source(data: Path, value: str, path, record: str, field: str) -> Path | None:
    """Where the published loader finds a screenshot: ``DATA/value``, else ``DATA/screenshots/value``."""
    for base in (data, data / "screenshots"):
        p = confined(base, value, path, record, field)
        if is_file(p):
            return p
    return None


def _link_or_copy(src: Path, dst: Path) -> None:
    copy_source(src, dst)  # a copy, never a link (editing the bench must not edit the release)


class _Questions:
    def __init__(self, path: Path, haystacks: dict, tier_file: Path, text_only: bool, data: Path, out: Path):
        self.rows: list[tuple[Question, list[str]]] = []
        seen: set[str] = set()
        for n, obj in iter_jsonl(path):
            r = SourceRecord(path, n, obj, "id")
            qid = r.get(obj, "id", str)
            if qid in seen:
                raise r.err("id", f"duplicate question id {qid!r}")
            seen.add(qid)
            domain = r.get(obj, "domain", str)
            if domain not in DOMAINS:
                raise r.err("domain", f"expected web or enterprise, got {domain!r}")
            qtype = r.get(obj, "question_type", str)
            if qtype not in QUESTION_TYPES:
                raise r.err("question_type", f"unknown type {qtype!r} (known: {', '.join(QUESTION_TYPES)})")
            text = obj.get("question")
            qimage = obj.get("image")
            if isinstance(text, dict):  # the harness's runtime form {"text", "image"}
                qimage = text.get("image", qimage)
                text = text.get("text")
            if not isinstance(text, str) or not text.strip():
                raise r.err("question", "missing or empty")
            answer = r.get(obj, "answer", str)
            spec = r.get(obj, "eval_function", str)
            try:
                name, _ = parse_spec(spec)
            except EvalSpecError as e:
                raise r.err("eval_function", str(e)) from None
            if name == "llm_abstention_checker" and not qtype.endswith("-abs"):
                raise r.err("eval_function", f"llm_abstention_checker on a non -abs question_type {qtype!r}")
            if qimage is not None and not isinstance(qimage, str):
                raise r.err("image", f"expected str or null, got {type(qimage).__name__}")
            image_rel = None
            if qimage and not text_only:
                src = confined(data, qimage, path, r.label, "image")
                if not is_file(src):
                    raise r.err("image", f"question image {qimage!r} not found")
                image_rel = "question_images/" + qid + (src.suffix or ".png")
                confined(out, image_rel, path, r.label, "id")  # the id names a file: it must stay inside
                _link_or_copy(src, out / image_rel)
            if qid not in haystacks:
                raise InputError(tier_file, None, qid, f"question {qid!r} has no haystack")
            abstain = qtype.endswith("-abs")
            q = Question(
                id=qid,
                axis=AXIS_MAP["*-abs"] if abstain else AXIS_MAP[qtype],
                question_en=text,
                gold_answer=answer,
                expect="no_memory" if abstain else "answer",
                asked_at=DATE,
                extra={
                    "question_type": qtype,
                    "domain": domain,
                    "environment": obj.get("environment") if isinstance(obj.get("environment"), str) else None,
                    "eval_function": spec,
                    "lme_v2": True,
                    "evidence_published": False,
                    **({"question_image": image_rel} if image_rel else {}),
                },
            )
            self.rows.append((q, haystacks[qid]))
        if not self.rows:
            raise InputError(path, None, None, "holds no questions")
        extra = sorted(set(haystacks) - seen)
        if extra:
            raise InputError(tier_file, None, extra[0], "haystack for a question not in questions.jsonl")


def _read_haystacks(path: Path) -> dict[str, list[str]]:
    if not is_file(path):
        raise InputError(path, None, None, "no such file (haystacks/lme_v2_<tier>.json)")
    obj = read_json(path)
    if not isinstance(obj, dict):
        raise InputError(path, None, None, f"expected a JSON object, got {type(obj).__name__}")
    for qid, ids in obj.items():
        if not isinstance(ids, list) or not all(isinstance(x, str) and x for x in ids):
            raise InputError(path, None, qid, "expected a list of trajectory ids")
        if len(set(ids)) != len(ids):
            dup = next(x for x in ids if ids.count(x) > 1)
            raise InputError(path, None, qid, f"trajectory id {dup!r} repeats")
    return obj


def _builds(rows) -> Iterator[tuple[str, list[str], list[Question]]]:
    order: dict[tuple, list[Question]] = {}
    for q, ids in rows:
        order.setdefault(tuple(ids), []).append(q)
    for ids, qs in order.items():
        yield build_id(ids), list(ids), qs


def import_longmemeval_v2(
    folder, out, *, tier: str = "small", text_only: bool = False, name: str | None = None, force: bool = False
) -> Bench:
    """Convert a LongMemEval-V2 data folder's ``tier`` into a bench folder at ``out`` (all or nothing)."""
    data = Path(folder)
    if tier not in TIERS:
        raise MemevalError(f"longmemeval-v2: --tier must be small or medium, got {tier!r}")
    if not data.is_dir():
        raise InputError(data, None, None, "not a folder (give the LongMemEval-V2 data root)")
    checked = verify_checksums(data, skip_images=text_only)
    qpath, tpath = data / "questions.jsonl", data / "trajectories.jsonl"
    hpath = data / "haystacks" / f"lme_v2_{tier}.json"
    for p in (qpath, tpath):
        if not is_file(p):
            raise InputError(p, None, None, "no such file")
    haystacks = _read_haystacks(hpath)
    index = index_trajectories(tpath)
    _check_room(out, haystacks, index)
    with staged_output(out, force) as root:
        qs = _Questions(qpath, haystacks, hpath, text_only, data, root)
        qs_ids = {q.id: ids for q, ids in qs.rows}
        builds: dict[str, dict] = {}
        counter = TierCounter()
        questions: list[Question] = []
        turns_file, q_file = f"turns_{tier}.jsonl", f"questions_{tier}.jsonl"
        images: dict[str, str] | None = None if text_only else {}
        n_images = 0
        with open(root / turns_file, "wb") as out_fh, open(tpath, "rb") as src:
            for hid, ids, hqs in _builds(qs.rows):
                domains = {q.extra["domain"] for q in hqs}
                next_id = 1
                for tid in ids:
                    entry = index.get(tid)
                    if entry is None:
                        raise InputError(hpath, None, hqs[0].id, f"unknown trajectory id {tid!r}")
                    if entry[2] not in domains:
                        raise InputError(
                            hpath,
                            None,
                            hqs[0].id,
                            f"trajectory {tid!r} is from domain {entry[2]!r}, not the question's",
                        )
                    obj = _read_at(src, tpath, entry)
                    label = f"id {tid!r}"
                    if images is not None:
                        n_images += _copy_screenshots(obj, data, root, tpath, label, images)
                    ts = trajectory_turns(obj, tpath, label, first_turn_id=next_id, haystack=hid, images=images)
                    next_id += len(ts)
                    counter.add_all(ts)
                    out_fh.write(turn_lines(ts))
                builds[hid] = {"trajectories": len(ids), "turns": next_id - 1, "questions": [q.id for q in hqs]}
                questions.extend(replace(q, haystack=hid) for q in hqs)
        hay_file = f"haystacks_{tier}.json"
        (root / hay_file).write_text(
            orjson.dumps({q.haystack: qs_ids[q.id] for q in questions}).decode(), encoding="utf-8"
        )
        with open(root / q_file, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("".join(orjson.dumps(q.to_dict()).decode() + "\n" for q in questions))
        t = counter.tier(tier, turns_file, q_file, len(questions))
        bench = Bench(
            name=name or f"longmemeval-v2-{tier}",
            version="2",
            tiers=(t,),
            root=str(out),
            license=LICENSE,
            source=SOURCE,
            tokenizer=TOKENIZER,
            axis_map=dict(AXIS_MAP),
            extra={
                "format": "longmemeval-v2",
                "lme_v2_tier": tier,
                "text_only": text_only,
                "official": not text_only,
                "notes": NOTES,
                "checksums_verified": checked,
                "screenshots": n_images,
                "n_builds": len(builds),
                "haystacks_file": hay_file,
                "builds": builds,
                "source_files": {
                    "questions.jsonl": file_sha256(qpath),
                    f"haystacks/lme_v2_{tier}.json": file_sha256(hpath),
                    "trajectories.jsonl": {"bytes": tpath.stat().st_size, "trajectories": len(index)},
                },
            },
        )
        save_bench(bench, root)
    return replace(bench, root=str(out))


def _check_room(out, haystacks: dict[str, list[str]], index: dict[str, tuple[int, int, str]]) -> None:
    """Refuse before writing when the builds (each a copy of its trajectories' text) would not fit
    the free space beside ``out`` (medium: 447 builds of up to 500 trajectories each)."""
    need = sum(index[t][1] for ids in {tuple(v) for v in haystacks.values()} for t in ids if t in index)
    parent = Path(out).resolve().parent
    while not parent.exists():
        parent = parent.parent
    free = shutil.disk_usage(parent).free
    if need > 0.9 * free:
        raise MemevalError(
            f"longmemeval-v2: the builds need about {need / 2**30:.1f} GiB of text (each distinct haystack "
            f"written whole), {free / 2**30:.1f} GiB free beside {out}"
        )


def _copy_screenshots(obj, data: Path, root: Path, path, label: str, images: dict[str, str]) -> int:
    """Copy each state's screenshot into ``screenshots/<trajectory>/``;
    ``images`` maps a screenshot value to its bench path. Returns how many were new."""
    if not isinstance(obj, dict) or not isinstance(obj.get("states"), list) or not isinstance(obj.get("id"), str):
        return 0  # trajectory_turns names what is wrong
    tid, new = obj["id"], 0
    tdir = "screenshots/" + hashlib.sha256(tid.encode("utf-8")).hexdigest()[:16]
    for i, s in enumerate(obj["states"]):
        shot = s.get("screenshot") if isinstance(s, dict) else None
        if not isinstance(shot, str) or not shot or shot in images:
            continue
        field = f"states[{i}].screenshot"
        src = _screenshot_source(data, shot, path, label, field)
        if src is None:
            raise InputError(path, label, field, f"screenshot {shot!r} not found (or use --text-only)")
        rel = f"{tdir}/{i}{src.suffix.lower() or '.png'}"
        _link_or_copy(src, root / rel)
        images[shot] = rel
        new += 1
    return new
