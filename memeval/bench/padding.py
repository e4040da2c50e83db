"""Turn any bench into a saturation test: padded tiers that nest around the original.

For each size a tier is built by inserting whole filler sessions into every haystack (per-question
or per-conversation benches: ``size`` turns per haystack; one-haystack benches: ``size`` turns in
the tier). Rules:

- the original tier is the smallest; each padded tier holds the previous one's turns in order
  (filler is only ever added), so tiers nest;
- original turns keep their text, speaker, date and image byte for byte; only ``turn_id`` and
  ``session_id`` are renumbered (1..N per haystack, in order) and evidence ids are remapped;
- filler sessions are dated between their neighbours (or before the first session, never after the
  last one, so no filler postdates a question) and the whole haystack stays chronological;
- filler comes from ``haystacks`` (sessions of OTHER haystacks of the same bench that hold no
  evidence, never one already in the target haystack; speakers mapped onto the target's) or from
  ``lifelog`` (the generator's ``filler_sessions``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InputError, MemevalError
from .io import confined, is_file, load_bench, read_questions, read_turns, save_bench, write_questions, write_turns
from .loaders._common import TierCounter, copy_source, staged_output
from .tokens import TokenMemo
from .model import Bench, Question, Session, Turn, haystacks_of
from .lifelog import filler_sessions

__all__ = ["SOURCES", "pad", "pad_haystacks", "padded_tier_name"]

SOURCES = ("haystacks", "lifelog")


@dataclass(frozen=True)
class _Slot:
    """A session in a padded haystack: its turns (original ids kept until renumbering) and date."""

    turns: tuple[Turn, ...]
    day: date
    original: bool


def _turn_with(t: Turn, **changes) -> Turn:
    """``dataclasses.replace`` for a turn, without its per-call look-up of the fields (a padded
    bench renumbers every turn)."""
    d = {k: getattr(t, k) for k in _TURN_FIELDS}
    d.update(changes)
    return Turn(**d)


_TURN_FIELDS = tuple(f.name for f in fields(Turn))


def padded_tier_name(base: str, size: int) -> str:
    return f"{base}_pad{size}"


def _day(t: Turn, path) -> date:
    try:
        return date.fromisoformat(t.date[:10])
    except ValueError:
        raise InputError(path, f"turn_id {t.turn_id}", "date", f"not an ISO date: {t.date!r}") from None


def _speaker_order(sessions: Sequence[Session]) -> list[str]:
    seen: dict[str, None] = {}
    for s in sessions:
        for t in s.turns:
            seen.setdefault(t.speaker, None)
    return list(seen)


class _HaystackFiller:
    """Draws sessions from other haystacks: evidence-free, each used at most once per target."""

    def __init__(self, hays: dict, questions: list[Question]):
        evidence = {(q.haystack, e) for q in questions for e in q.evidence_turns}
        self.pool: list[tuple[str | None, Session, tuple]] = []
        keys = set()
        for h, sessions in hays.items():
            for s in sessions:
                if any((h, t.turn_id) in evidence for t in s.turns):
                    continue
                key = self.key(s)
                if key in keys:
                    continue
                keys.add(key)
                self.pool.append((h, s, key))
        if len(hays) < 2:
            raise MemevalError(
                "padding source 'haystacks' needs a bench with several haystacks "
                "(this one has one); use --source lifelog"
            )

    @staticmethod
    def key(s: Session) -> tuple:
        return tuple((t.speaker, t.text) for t in s.turns)

    def draw(self, target: str | None, used: set, rng: random.Random, target_speakers: list[str]) -> Session:
        pool = self.pool
        for _ in range(64):
            h, s, key = pool[rng.randrange(len(pool))]
            if h != target and key not in used:
                break
        else:
            left = [i for i, (h, _, key) in enumerate(pool) if h != target and key not in used]
            if not left:
                raise MemevalError(
                    f"padding: other haystacks ran out of evidence-free sessions for "
                    f"haystack {target!r}; use smaller sizes or --source lifelog"
                )
            h, s, key = pool[rng.choice(left)]
        used.add(key)
        return Session(s.session_id, s.date, _map_speakers(s.turns, target_speakers))


def _map_speakers(turns: tuple[Turn, ...], target: list[str]) -> tuple[Turn, ...]:
    """Rename filler speakers that the target haystack does not have onto ones it does (in order of
    first appearance), so that a speaker name does not tell filler from story."""
    own = _speaker_order([Session(0, "", turns)])
    if set(own) <= set(target):
        return turns
    mapping = dict(zip([x for x in own if x not in target], [x for x in target if x not in own]))
    return tuple(_turn_with(t, speaker=mapping.get(t.speaker, t.speaker)) for t in turns)


def _lifelog_filler(seed: int) -> Callable[[int, str | None, int, list[str]], list[Session]]:
    def make(n_turns: int, haystack: str | None, round_no: int, dates: list[str]) -> list[Session]:
        sub = random.Random(f"{seed}|{haystack}|{round_no}").randrange(2**31)
        return list(filler_sessions(n_turns, sub, dates))

    return make


def _place(slots: list[_Slot], rng: random.Random, floor: date, turns: tuple[Turn, ...] = ()) -> _Slot:
    """Insert a filler slot before a random existing session, dated between its neighbours."""
    i = rng.randrange(len(slots))
    hi = slots[i].day
    lo = slots[i - 1].day if i > 0 else min(floor, hi)
    if lo > hi:
        lo = hi
    day = lo + timedelta(days=rng.randint(0, (hi - lo).days))
    slot = _Slot(tuple(_turn_with(t, date=day.isoformat()) for t in turns), day, False)
    slots.insert(i, slot)
    return slot


def _lifelog_round(
    slots: list[_Slot], need: int, make, h, round_no: int, rng: random.Random, floor: date, speakers: list[str]
) -> list[_Slot]:
    """Place sessions shaped like the haystack's own (mean length), then ask the generator for them."""
    own = [len(x.turns) for x in slots if x.original]
    k = max(1, min(round(need / (sum(own) / len(own))), need // 2 or 1))
    holders = [_place(slots, rng, floor) for _ in range(k)]
    made = make(need, h, round_no, [p.day.isoformat() for p in holders])
    if sum(len(x.turns) for x in made) != need or len(made) != k:
        raise MemevalError(
            f"padding: lifelog filler_sessions gave {sum(len(x.turns) for x in made)} turns "
            f"in {len(made)} sessions, asked for {need} in {k}"
        )
    fill = {
        id(p): _Slot(
            _map_speakers(tuple(_turn_with(t, haystack=h, date=p.day.isoformat()) for t in m.turns), speakers),
            p.day,
            False,
        )
        for p, m in zip(holders, made)
    }
    return [fill.get(id(x), x) for x in slots if id(x) not in fill or fill[id(x)].turns]


def pad_haystacks(
    turns: list[Turn],
    questions: list[Question],
    sizes: Sequence[int],
    *,
    source: str = "haystacks",
    seed: int = 0,
    path="<turns>",
) -> list[tuple[list[Turn], list[Question]]]:
    """(turns, questions) per size, for a tier's turns and questions (in memory); ``sizes`` must
    increase (each tier is built on the one before, which is what makes them nest)."""
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise MemevalError(f"padding: sizes must increase, got {list(sizes)}")
    hays = haystacks_of(turns)
    if None in hays and len(hays) > 1:
        raise InputError(path, None, "haystack", "some turns carry a haystack id and some do not")
    per_haystack = None not in hays
    if not per_haystack:
        n = len(turns)
        small = [s for s in sizes if s <= n]
        if small:
            raise MemevalError(f"padding: size {small[0]} is not larger than the tier ({n} turns)")
    if source == "haystacks":
        filler = _HaystackFiller(hays, questions)
        life = None
    elif source == "lifelog":
        filler, life = None, _lifelog_filler(seed)
    else:
        raise MemevalError(f"unknown padding source {source!r} (known: {', '.join(SOURCES)})")

    results: list[dict] = [{} for _ in sizes]  # per size: haystack -> slots
    for h, sessions in hays.items():
        rng = random.Random(f"{seed}|{h}")
        slots = [_Slot(s.turns, _day(s.turns[0], path), True) for s in sessions]
        first, last = slots[0].day, slots[-1].day
        floor = first - max(last - first, timedelta(days=30))
        speakers = _speaker_order(sessions)
        used = {_HaystackFiller.key(s) for s in sessions}
        count = len(turns) if not per_haystack else sum(len(s.turns) for s in sessions)
        for k, size in enumerate(sizes):
            need = size - count
            if need > 0:
                if filler is not None:
                    while need > 0:
                        drawn = filler.draw(h, used, rng, speakers).turns[:need]
                        _place(slots, rng, floor, drawn)
                        need -= len(drawn)
                else:
                    slots = _lifelog_round(slots, need, life, h, k, rng, floor, speakers)
                count = size
            results[k][h] = list(slots)

    out = []
    for per_size in results:
        new_turns: list[Turn] = []
        remap: dict[tuple, int] = {}
        smap: dict[tuple, int] = {}
        for h, slots in per_size.items():
            tid = 0
            for sid, slot in enumerate(slots, 1):
                for t in slot.turns:
                    tid += 1
                    if slot.original:
                        remap[(h, t.turn_id)] = tid
                        smap.setdefault((h, t.session_id), sid)
                    new_turns.append(_turn_with(t, turn_id=tid, session_id=sid, haystack=h))
        new_qs = [
            replace(
                q,
                evidence_turns=tuple(remap[(q.haystack, e)] for e in q.evidence_turns if (q.haystack, e) in remap),
                evidence_sessions=tuple(smap.get((q.haystack, s), s) for s in q.evidence_sessions),
            )
            for q in questions
        ]
        for q, nq in zip(questions, new_qs):
            if len(nq.evidence_turns) != len(q.evidence_turns):
                raise InputError(path, None, "evidence_turns", f"question {q.id!r}: evidence turn not in its haystack")
        out.append((new_turns, new_qs))
    return out


def pad(
    bench_dir,
    sizes: Sequence[int],
    source: str = "haystacks",
    seed: int = 0,
    out=None,
    *,
    tier: str | None = None,
    name: str | None = None,
    force: bool = False,
    progress=None,
) -> Bench:
    """Write a bench at ``out``: the tier ``tier`` (default: the smallest) plus one padded tier per size.
    ``progress(step)`` is called with a short text as each step starts."""
    say = progress or (lambda _step: None)
    if out is None:
        raise MemevalError("padding: an output folder is required")
    sizes = sorted(set(int(s) for s in sizes))
    if not sizes or sizes[0] <= 0:
        raise MemevalError("padding: sizes must be positive turn counts")
    bench = load_bench(bench_dir)
    root = Path(bench.root)
    base = bench.tier(tier) if tier else bench.tiers[0]
    tpath, qpath = root / base.turns_file, root / base.questions_file
    say(f"reading tier {base.name}")
    turns, questions = read_turns(tpath), read_questions(qpath)
    # named question sets (e.g. probes) are padded alongside: same haystacks, evidence remapped
    set_qs = {k: read_questions(root / f) for k, f in base.question_sets.items()}
    if not turns:
        raise InputError(tpath, None, None, "the tier has no turns")
    everything = questions + [q for qs in set_qs.values() for q in qs]
    say(f"padding {len(turns)} turns to {', '.join(map(str, sizes))} ({source})")
    padded = pad_haystacks(turns, everything, sizes, source=source, seed=seed, path=tpath)
    per_haystack = turns[0].haystack is not None
    images = sorted(
        {
            t.image
            for ts, _ in padded
            for t in ts
            if t.image and "://" not in t.image and is_file(confined(root, t.image, tpath, None, "image"))
        }
    )
    with staged_output(out, force) as tmp:
        copy_source(tpath, tmp / base.turns_file)
        for f in base.files[1:]:
            if not (tmp / f).exists():
                copy_source(root / f, tmp / f)
        for img in images:
            if not (tmp / img).exists():
                copy_source(root / img, tmp / img)
        tiers, memo = [base], TokenMemo()  # the tiers nest: most texts are counted once for all
        for size, (ts, qs) in zip(sizes, padded):
            tname = padded_tier_name(base.name, size)
            say(f"writing tier {tname}")
            tf, qf = f"turns_{tname}.jsonl", f"questions_{tname}.jsonl"
            write_turns(tmp / tf, ts)
            write_questions(tmp / qf, qs[: len(questions)])
            named, at = {}, len(questions)
            for k, orig in set_qs.items():
                named[k] = f"{k}_{tname}.jsonl"
                write_questions(tmp / named[k], qs[at : at + len(orig)])
                at += len(orig)
            counted = TierCounter(memo).add_all(ts).tier(tname, tf, qf, len(questions))
            tiers.append(replace(counted, question_sets=named))
        generator = dict(bench.generator)
        generator["padding"] = {
            "source": source,
            "sizes": sizes,
            "seed": seed,
            "base_tier": base.name,
            "unit": "turns per haystack" if per_haystack else "turns per tier",
            "from_bench": f"{bench.name} {bench.version}",
            "from_content_hash": bench.content_hash,
        }
        extra = {k: v for k, v in bench.extra.items() if k not in ("tiers_nest", "questions_in_every_tier")}
        extra["tiers_nest"] = True
        extra["notes"] = [n for n in extra.get("notes", []) if "nest" not in n] + [
            f"tiers {', '.join(t.name for t in tiers[1:])} pad tier {base.name} with {source} filler "
            "(memeval pad): they nest, evidence turns are byte-identical, filler is never dated after "
            "a haystack's last session"
        ]
        new = Bench(
            name=name or f"{bench.name}-padded",
            version=bench.version,
            tiers=tuple(tiers),
            root=str(out),
            license=bench.license,
            source=bench.source,
            tokenizer=bench.tokenizer,
            generator=generator,
            axis_map=bench.axis_map,
            extra=extra,
        )
        save_bench(new, tmp)
    return new
