"""glasshouse v0.1 folders → a bench folder that points at the original files.

A tier is ``glasshouse_v0.1_<tier>.jsonl`` with ``questions_<tier>.jsonl``. ``questions_xling.jsonl``
(asked against ``small`` or larger) and ``glasshouse_v0.1_probes.jsonl`` (false-memory probes) are
attached to each tier whose turns hold their evidence: xling to the tier's main question set, the
probes as the tier's named question set ``probes``. Evidence turn ids are per tier file, so a
question file is only ever paired with a tier where every evidence id exists and sits in one of the
question's ``evidence_sessions``; pairing it with any other tier is refused.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ...errors import InputError, MemevalError
from ...atomic import dumps_line
from ..images import image_ref_kind
from ..io import confined, file_sha256, is_file, iter_jsonl_lines, question_from_dict, read_turns, save_bench
from ..model import SESSION_FIELD_KEY, Bench, Question, Tier, Turn
from ..tokens import TOKENIZER
from ._common import TierCounter, copy_source, staged_output

__all__ = [
    "TIER_ORDER",
    "XLING_MIN_TIER",
    "PROBES_SET",
    "import_glasshouse",
    "read_question_lines",
    "check_pairing",
    "find_tier_files",
]

TIER_ORDER = ("core", "small", "medium", "full")
XLING_MIN_TIER = "small"
PROBES_SET = "probes"
LICENSE = "Apache-2.0"
_TIER_FILE = re.compile(r"^glasshouse_v(\d+(?:\.\d+)*)_(core|small|medium|full)\.jsonl$")


def find_tier_files(folder) -> tuple[str, dict[str, Path]]:
    """(version, {tier: turns file}) for the tier files present in ``folder``, smallest first."""
    folder = Path(folder)
    found: dict[str, Path] = {}
    versions = set()
    for p in sorted(folder.iterdir()):
        m = _TIER_FILE.match(p.name)
        if m:
            versions.add(m.group(1))
            found[m.group(2)] = p
    if not found:
        raise InputError(folder, None, None, "no glasshouse_v<version>_<core|small|medium|full>.jsonl here")
    if len(versions) > 1:
        raise InputError(folder, None, None, f"tier files of several versions: {sorted(versions)}")
    return versions.pop(), {t: found[t] for t in TIER_ORDER if t in found}


def read_question_lines(path, default_axis: str | None = None) -> list[tuple[int, Question, str]]:
    """(line number, question, the line's exact text) per question; validates like ``read_questions``."""
    out, seen = [], set()
    for n, obj, line in iter_jsonl_lines(path):
        if default_axis and "axis" not in obj:
            obj["axis"] = default_axis
            line = dumps_line(obj) + "\n"
        q = question_from_dict(obj, path, n)
        if q.id in seen:
            raise InputError(path, n, "id", f"duplicate question id {q.id!r}")
        seen.add(q.id)
        out.append((n, q, line))
    return out


def _raw_lines(path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [x if x.endswith("\n") else x + "\n" for x in fh if x.strip()]


#: At most this share of a question file's rows may cite an evidence session
#: that does not hold the evidence turn before the pairing is refused: a row or two is a data error
#: for the audit to report (glasshouse v0.1 core: Q366), a whole file is the wrong tier.
SESSION_MISMATCH_TOLERANCE = 0.01


def detect_session_field(turns: list[Turn], questions: list[Question]) -> str:
    """The turn field ``evidence_sessions`` refer to: ``session_id`` or a published ``*session*``
    field (glasshouse: ``core_session``), whichever holds more of the cited (turn, session) pairs."""
    pos = {t.turn_id: t for t in turns}
    candidates = ["session_id"] + sorted(
        {k for t in turns[:1000] for k, v in t.extra.items() if "session" in k and isinstance(v, (int, str))}
    )
    pairs = [
        (tid, {str(s) for s in q.evidence_sessions})
        for q in questions
        if q.evidence_sessions
        for tid in q.evidence_turns
        if tid in pos
    ]
    best, best_hits = "session_id", -1
    for f in candidates:
        hits = sum(1 for tid, ss in pairs if str(pos[tid].session_key(f)) in ss)
        if hits > best_hits:
            best, best_hits = f, hits
    return best


def _unresolved(q: Question, session_of: dict[int, int | str]) -> tuple[str | None, str | None]:
    """(why a missing turn makes ``q`` unresolvable, why a cited session is wrong), each None if fine."""
    sessions = {str(s) for s in q.evidence_sessions}
    wrong = None
    for tid in q.evidence_turns:
        if tid not in session_of:
            return f"evidence turn {tid} does not exist", None
        if sessions and str(session_of[tid]) not in sessions and wrong is None:
            wrong = (
                f"evidence turn {tid} is in session {session_of[tid]}, not in evidence_sessions "
                f"{sorted(q.evidence_sessions, key=str)}"
            )
    return None, wrong


def check_pairing(q_path, rows, turns_path, session_of, mismatches: list[str] | None = None) -> InputError | None:
    """The first question of ``rows`` whose evidence does not resolve in the tier, as an error.

    A cited session that does not hold the evidence turn is an error only when more rows than
    ``SESSION_MISMATCH_TOLERANCE`` allows have one; otherwise each is appended to ``mismatches``
    ("<qid>: <why>") and the pairing stands (the audit reports them).
    """
    wrong: list[tuple[int, Question, str]] = []
    for n, q, _ in rows:
        missing, bad_session = _unresolved(q, session_of)
        if missing:
            return InputError(
                q_path,
                n,
                "evidence_turns",
                f"question {q.id!r} cannot be paired with {Path(turns_path).name}: {missing} there "
                "(evidence turn ids are per tier file; a question file belongs to one tier)",
            )
        if bad_session:
            wrong.append((n, q, bad_session))
    if len(wrong) > SESSION_MISMATCH_TOLERANCE * len(rows):
        n, q, why = wrong[0]
        more = f"; {len(wrong) - 1} more row(s) like it" if len(wrong) > 1 else ""
        return InputError(
            q_path,
            n,
            "evidence_sessions",
            f"question {q.id!r} cannot be paired with {Path(turns_path).name}: {why} there{more}",
        )
    if mismatches is not None:
        mismatches.extend(f"{q.id}: {why}" for _, q, why in wrong)
    return None


def _check_images(turns: list[Turn], folder: Path, turns_path: Path) -> list[str]:
    images = []
    for t in turns:
        if t.image:
            if image_ref_kind(t.image) in ("data", "remote"):
                raise InputError(
                    turns_path, f"turn_id {t.turn_id}", "image", "expected a file path inside the folder, not a URL"
                )
            if not is_file(confined(folder, t.image, turns_path, f"turn_id {t.turn_id}", "image")):
                raise InputError(turns_path, f"turn_id {t.turn_id}", "image", f"file {t.image!r} not found")
            images.append(t.image)
    return images


def import_glasshouse(
    folder, out, *, name: str = "glasshouse", force: bool = False, pairs: dict[str, list[str]] | None = None
) -> Bench:
    """Turn a glasshouse folder into a bench folder at ``out`` (original files linked or copied).

    ``pairs`` maps an extra question file (name in ``folder``) to the tiers it must be attached to;
    any tier where its evidence does not resolve is refused. Without it, ``questions_xling.jsonl``
    goes to each tier from ``small`` up where it resolves, and the probes to each tier where they do.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, None, None, "not a folder")
    version, tier_files = find_tier_files(folder)
    pairs = {k: list(v) for k, v in (pairs or {}).items()}
    for fname, tiers in pairs.items():
        if not is_file(confined(folder, fname, "--pair", None, fname)):
            raise InputError(folder / fname, None, None, "no such question file")
        for t in tiers:
            if t not in tier_files:
                raise MemevalError(f"--pair {fname}={t}: no tier {t!r} here (tiers: {list(tier_files)})")

    turns_by_tier: dict[str, list[Turn]] = {}
    images: set[str] = set()
    for t, p in tier_files.items():
        turns = read_turns(p)
        if any(x.haystack for x in turns):
            raise InputError(p, None, "haystack", "a glasshouse tier is one haystack; turns must not carry one")
        images.update(_check_images(turns, folder, p))
        turns_by_tier[t] = turns

    main_rows: dict[str, list] = {}
    for t, p in tier_files.items():
        qp = folder / f"questions_{t}.jsonl"
        if not qp.is_file():
            raise InputError(qp, None, None, f"missing: tier {t!r} has no question file")
        main_rows[t] = read_question_lines(qp)
    smallest = next(iter(tier_files))
    session_field = detect_session_field(turns_by_tier[smallest], [q for _, q, _ in main_rows[smallest]])
    index: dict[str, dict[int, int | str]] = {
        t: {x.turn_id: x.session_key(session_field) for x in turns} for t, turns in turns_by_tier.items()
    }

    attached: dict[str, list[tuple[str, list]]] = {t: [] for t in tier_files}
    session_mismatches: dict[str, list[str]] = {}
    for t, p in tier_files.items():
        qp = folder / f"questions_{t}.jsonl"
        rows = main_rows[t]
        err = check_pairing(qp, rows, p, index[t], session_mismatches.setdefault(qp.name, []))
        if err:
            raise err
        attached[t].append((qp.name, rows))

    skipped: dict[str, dict[str, str]] = {}
    sets: dict[str, dict[str, tuple[str, list]]] = {t: {} for t in tier_files}  # tier -> set -> file
    probes = f"glasshouse_v{version}_probes.jsonl"
    # (file, axis when a row has none, smallest eligible tier, named set or None for the main set)
    extras = [
        ("questions_xling.jsonl", None, TIER_ORDER.index(XLING_MIN_TIER), None),
        (probes, "FALSE_MEMORY", 0, PROBES_SET),
    ]
    extras += [(f, None, 0, None) for f in pairs if f not in {e[0] for e in extras}]
    for fname, default_axis, min_rank, set_name in extras:
        qp = folder / fname
        if not qp.is_file():
            continue
        rows = read_question_lines(qp, default_axis)
        if fname in pairs:
            targets = pairs[fname]
            for t in targets:
                err = check_pairing(qp, rows, tier_files[t], index[t], session_mismatches.setdefault(fname, []))
                if err:
                    raise err
        else:
            targets = []
            for t in tier_files:
                if TIER_ORDER.index(t) < min_rank:
                    continue
                found: list[str] = []
                err = check_pairing(qp, rows, tier_files[t], index[t], found)
                if err:
                    skipped.setdefault(fname, {})[t] = err.message
                else:
                    targets.append(t)
                    session_mismatches.setdefault(fname, []).extend(
                        x for x in found if x not in session_mismatches.get(fname, [])
                    )
            if not targets:
                raise MemevalError(
                    f"{qp}: its evidence resolves in no tier here ("
                    + ("; ".join(f"{t}: {m}" for t, m in skipped.get(fname, {}).items()) or "no eligible tier")
                    + ")"
                )
        for t in targets:
            if set_name:
                sets[t][set_name] = (fname, rows)
            else:
                attached[t].append((fname, rows))

    with staged_output(out, force) as root:
        for p in tier_files.values():
            copy_source(p, root / p.name)
        for img in sorted(images):
            copy_source(folder / img, root / img)

        def place(fname: str, rows: list, rewritten_name: str) -> str:
            """The original file when its lines are kept as they are, else a rewritten copy."""
            if all(line == raw for raw, (_, _, line) in zip(_raw_lines(folder / fname), rows)):
                if not (root / fname).exists():
                    copy_source(folder / fname, root / fname)
                return fname
            if not (root / rewritten_name).exists():
                with open(root / rewritten_name, "w", encoding="utf-8", newline="") as fh:
                    fh.writelines(line for _, _, line in rows)
            return rewritten_name

        made: list[Tier] = []
        for t, p in tier_files.items():
            files = attached[t]
            ids: dict[str, str] = {}
            for fname, rows in files:
                for n, q, _ in rows:
                    if q.id in ids:
                        raise InputError(
                            folder / fname, n, "id", f"question id {q.id!r} also in {ids[q.id]} (tier {t!r})"
                        )
                    ids[q.id] = fname
            if len(files) == 1:
                q_name = place(files[0][0], files[0][1], f"bench_questions_{t}.jsonl")
            else:
                q_name = f"bench_questions_{t}.jsonl"
                with open(root / q_name, "w", encoding="utf-8", newline="") as fh:
                    for _, rows in files:
                        fh.writelines(line for _, _, line in rows)
            for fname, _ in files[1:]:
                if not (root / fname).exists():
                    copy_source(folder / fname, root / fname)  # kept for reference
            n_q = sum(len(rows) for _, rows in files)
            named = {k: place(f, rows, f"bench_{k}.jsonl") for k, (f, rows) in sets[t].items()}
            counted = TierCounter().add_all(turns_by_tier[t]).tier(t, p.name, q_name, n_q)
            made.append(replace(counted, question_sets=named))
        axes = sorted(
            {q.axis for v in attached.values() for _, rows in v for _, q, _ in rows}
            | {q.axis for v in sets.values() for _, rows in v.values() for _, q, _ in rows}
        )
        bench = Bench(
            name=name,
            version=version,
            tiers=tuple(made),
            root=str(out),
            license=LICENSE,
            source=f"glasshouse v{version} files from {folder.resolve()}",
            tokenizer=TOKENIZER,
            axis_map={a: a for a in axes},
            extra={
                "format": "glasshouse",
                "source_files": {
                    f: {"file": f, "sha256": file_sha256(folder / f)}
                    for f in sorted(
                        {p.name for p in tier_files.values()}
                        | {f for v in attached.values() for f, _ in v}
                        | {f for v in sets.values() for f, _ in v.values()}
                    )
                },
                SESSION_FIELD_KEY: session_field,
                "evidence_session_mismatches": {f: v for f, v in session_mismatches.items() if v},
                "question_files": {t: [f for f, _ in v] for t, v in attached.items()},
                "question_set_files": {t: {k: f for k, (f, _) in v.items()} for t, v in sets.items() if v},
                "not_attached": skipped,
                "notes": [
                    "degradation curves compare tiers on the core questions (inside every tier's "
                    "set); axes whose evidence lives only in larger tiers are read off the largest",
                    f"false-memory probes are the named question set '{PROBES_SET}' of each tier "
                    "(memeval run --question-set probes), kept apart from the main weighted mean",
                ],
            },
        )
        save_bench(bench, root)
    return replace(bench, root=str(out))
