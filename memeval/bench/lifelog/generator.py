"""Build the whole life-story bench in memory (``build``) and write it as a bench folder (``generate``).

Tiers nest by construction: every session has a ``level`` (0 core … 3 full) and a tier holds the
sessions of its level and below, sorted by (date, creation order), so a tier's turns are the tier
below's turns in the same order with filler sessions interleaved by date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path


from ...errors import InputError, BenchContractError
from ..axes import AXES
from ..io import MANIFEST, read_yaml, save_bench, write_questions, write_turns
from ..loaders._common import staged_output
from ..model import Bench, Question, Tier, Turn, make_turn
from ..tokens import TOKENIZER, count_tokens_many
from .data import LANGUAGES, load
from .draft import Counter, DQuestion, DSession
from .filler import NearMiss, make_filler
from .languages import language_sessions, query_questions
from .photos import Scene, draw_scene, make_scenes, scene_questions
from .presets import PRESETS, TIER_NAMES, Preset
from .rng import stream
from .story import Story
from .values import Values

__all__ = ["GENERATOR_NAME", "GENERATOR_VERSION", "STORY_START", "STORY_END", "ASKED_AT", "Built", "build", "generate"]

GENERATOR_NAME = "memeval.lifelog"
GENERATOR_VERSION = "1.2.0"
STORY_START = date(2025, 6, 16)
STORY_END = date(2026, 11, 15)  # ~17 months
ASKED_AT = (STORY_END + timedelta(days=1)).isoformat()
_SPAN = (STORY_END - STORY_START).days + 1


@dataclass
class Built:
    preset: Preset
    seed: int
    sessions: list[DSession]
    questions: list[DQuestion]
    photos: list[tuple[str, Scene]]  # (relative path, scene)


def _story_dates(rng, n: int) -> list[date]:
    slot = _SPAN / n
    return [STORY_START + timedelta(days=int(i * slot + rng.random() * max(0.0, slot - 1))) for i in range(n)]


def _random_days(rng, n: int) -> list[date]:
    return [STORY_START + timedelta(days=rng.randrange(_SPAN)) for _ in range(n)]


def _tier_sessions(sessions: list[DSession], level: int) -> list[DSession]:
    return sorted((s for s in sessions if s.level <= level), key=lambda s: (s.date, s.seq))


def build(preset: str | Preset, seed: int) -> Built:
    p = PRESETS[preset] if isinstance(preset, str) else preset
    uid, seq = Counter(), Counter()
    values = Values(stream(seed, "values"), p.first_names)
    story = Story(seed, values, _story_dates(stream(seed, "dates"), p.story_sessions))
    ax = p.axes
    story.basic(ax.get("BASIC", 0), "BASIC")
    story.basic(ax.get("PARAPHRASE", 0), "PARAPHRASE")
    story.temporal(ax.get("TEMPORAL", 0))
    for axis in ("UPDATE", "STALE", "CONFLICT"):
        story.changing(ax.get(axis, 0), axis)
    story.contradict(ax.get("CONTRADICT", 0))
    story.reconcile(ax.get("RECONCILE", 0))
    story.gather(ax.get("GATHER", 0))
    story.multi(ax.get("MULTI", 0))
    story.cross(ax.get("CROSS", 0))
    story.implicit(ax.get("IMPLICIT", 0))
    story.polar_facts(p.fm[1] + p.probes[1])
    story.false_memory(*p.fm)
    story.false_memory(*p.probes, qset="probes")
    story.abstain(ax.get("ABSTAIN", 0))
    sessions = story.write(uid, p.tier_turns[0] // 2, seq)
    questions = list(story.questions)
    questions += query_questions(seed, story.keyed_facts, p.xq_per_lang)

    near = _near_miss(story, questions)

    # Level 1 (small): the language sessions and filler, some of it carrying the photos.
    lang_sessions, xs = language_sessions(
        seed, values, STORY_START, _SPAN, p.lang_sessions, p.xs_per_session, p.lang_glue_pairs, uid, seq
    )
    questions += xs
    below_turns = sum(len(s.turns) for s in sessions) + sum(len(s.turns) for s in lang_sessions)
    n_fill = p.tier_sessions[1] - len(sessions) - len(lang_sessions)
    if n_fill < p.photos:
        raise BenchContractError(f"preset {p.name}: {n_fill} small-tier filler sessions cannot carry {p.photos} photos")
    rng = stream(seed, "filler-dates", 1)
    photo_days = [STORY_START + timedelta(days=d) for d in rng.sample(range(_SPAN), p.photos)]
    fill_days = photo_days + _random_days(rng, n_fill - p.photos)
    small = make_filler(seed, "small", fill_days, p.tier_turns[1] - below_turns, 1, uid, seq, near)
    photos = _place_photos(seed, small[: p.photos], p, questions)
    sessions += lang_sessions + small
    for level in (2, 3):
        n_turns = p.tier_turns[level] - p.tier_turns[level - 1]
        n_sess = p.tier_sessions[level] - p.tier_sessions[level - 1]
        days = _random_days(stream(seed, "filler-dates", level), n_sess)
        sessions += make_filler(seed, TIER_NAMES[level], days, n_turns, level, uid, seq, near)
    _number(questions)
    return Built(p, seed, sessions, questions, photos)


_GOLD_FIELDS = ("gold_alts", "gold_parts", "side_a", "side_b", "clash_a", "clash_b", "stale_answer")


def _near_miss(story: Story, questions: list[DQuestion]) -> NearMiss:
    """Near-miss filler over the story's hooks whose person is told about in a story statement (never
    a ghost), guarded by every gold-like value of every question."""
    golds: list[str] = []
    for q in questions:
        golds.append(q.gold)
        for f in _GOLD_FIELDS:
            v = q.fields.get(f)
            golds.extend([v] if isinstance(v, str) else v or ())
    told = "\n".join(st.text for st in story.statements)
    hooks = [h for h in story.hooks if h.person is None or h.person in told]
    return NearMiss(hooks, [g for g in golds if g and g.strip()])


def _place_photos(seed: int, carriers: list[DSession], p: Preset, questions: list[DQuestion]):
    rng = stream(seed, "photos")
    share, reply = load("filler")["photo"]["share"], load("filler")["photo"]["reply"]
    scenes = make_scenes(len(carriers), rng)
    out = []
    for no, (s, scene) in enumerate(zip(carriers, scenes), 1):
        rel = f"img/img{no:02d}.png"
        users = [i for i, t in enumerate(s.turns) if t.speaker == "user"]
        i = rng.choice(users)
        t = s.turns[i]
        t.text, t.image, t.image_no = rng.choice(share), rel, no
        if i + 1 < len(s.turns):
            s.turns[i + 1].text = rng.choice(reply)
        for q, gold, alts in scene_questions(scene, s.date, p.photo_questions):
            questions.append(
                DQuestion("IMAGE", q, gold, [t], [f"P{no:02d}"], 1, fields={"gold_alts": alts} if alts else {})
            )
        out.append((rel, scene))
    return out


#: Question-id prefix per question set: ids are unique across the sets of a bench.
_ID_PREFIX = {"main": "Q", "probes": "FM"}


def _number(questions: list[DQuestion]) -> None:
    order = {a: i for i, a in enumerate(AXES)}
    questions.sort(key=lambda q: order[q.axis])  # stable: creation order within an axis
    n: dict[str, int] = {}
    for q in questions:
        n[q.qset] = n.get(q.qset, 0) + 1
        q.qid = f"{_ID_PREFIX[q.qset]}{n[q.qset]:04d}"


def _question(q: DQuestion, ids: dict[int, tuple[int, int]]) -> Question:
    ev = sorted({ids[e.uid] for e in q.evidence})
    f = dict(q.fields)
    if q.source is not None:
        f["source_id"] = q.source.qid
    return Question(
        id=q.qid,
        axis=q.axis,
        question_en=q.question_en,
        gold_answer=q.gold,
        need=tuple(q.need),
        evidence_turns=tuple(t for t, _ in ev),
        evidence_sessions=tuple(sorted({s for _, s in ev})),
        asked_at=ASKED_AT,
        **f,
    )


def write(built: Built, root: Path) -> Bench:
    """Write the tier files, photos and manifest of ``built`` into the (existing, empty) folder ``root``."""
    every = [t for s in built.sessions for t in s.turns]  # each turn once (the full tier holds them all)
    tokens = dict(zip([t.uid for t in every], count_tokens_many([t.text for t in every])))  # count_tokens, in bulk
    tiers = []
    for level, name in enumerate(TIER_NAMES):
        ids: dict[int, tuple[int, int]] = {}
        turns: list[Turn] = []
        n_tok = 0
        tier_sessions = _tier_sessions(built.sessions, level)
        for sid, s in enumerate(tier_sessions, 1):
            for t in s.turns:
                tid = len(turns) + 1
                ids[t.uid] = (tid, sid)
                turns.append(make_turn(tid, sid, t.speaker, t.text, s.date, t.image, t.image_no))
                n_tok += tokens[t.uid]
        tf, qf = f"turns_{name}.jsonl", f"questions_{name}.jsonl"
        write_turns(root / tf, turns)
        sets = {}
        for qset in dict.fromkeys(q.qset for q in built.questions):
            qs = [_question(q, ids) for q in built.questions if q.level <= level and q.qset == qset]
            if qset == "main":
                n_main = len(qs)
                write_questions(root / qf, qs)
            elif qs:
                sets[qset] = f"{qset}_{name}.jsonl"
                write_questions(root / sets[qset], qs)
        tiers.append(Tier(name, tf, qf, len(turns), len(tier_sessions), n_tok, n_main, question_sets=sets))
        del turns
    (root / "img").mkdir(exist_ok=True)
    for rel, scene in built.photos:
        draw_scene(scene, root / rel)
    p = built.preset
    bench = Bench(
        name="lifelog",
        version=GENERATOR_VERSION,
        tiers=tuple(tiers),
        root=str(root),
        license="Apache-2.0",
        source="generated by memeval (memeval.bench.lifelog): one person's life told over ~17 months",
        tokenizer=TOKENIZER,
        generator={"name": GENERATOR_NAME, "version": GENERATOR_VERSION, "preset": p.name, "seed": built.seed},
        extra={
            "story": {"start": STORY_START.isoformat(), "end": STORY_END.isoformat(), "asked_at": ASKED_AT},
            "photos": len(built.photos),
            "languages": ["en", *LANGUAGES],
        },
    )
    save_bench(bench, root)
    return bench


def _is_previous_generation(out: Path) -> bool:
    try:
        meta = read_yaml(out / MANIFEST)
    except InputError:
        return False
    return isinstance(meta, dict) and (meta.get("generator") or {}).get("name") == GENERATOR_NAME


def generate(preset: str, seed: int, out: Path, *, force: bool = False) -> Path:
    """Generate the ``preset`` bench with ``seed`` into ``out`` atomically (built beside it, then renamed).

    ``out`` must be absent, empty, or a previous generation; anything else needs ``force=True``.

    >>> bench = generate("tiny", 1, tmp / "lifelog-tiny-s1")
    >>> sorted(p.name for p in bench.iterdir() if p.suffix == ".yaml")
    ['bench.yaml']
    >>> generate("tiny", 1, tmp / "lifelog-tiny-s1") == bench  # a previous generation is replaced
    True
    """
    out = Path(out)
    if preset not in PRESETS:
        raise InputError("--preset", None, None, f"unknown preset {preset!r} (choose from {', '.join(PRESETS)})")
    if out.exists():
        if not out.is_dir():
            raise InputError(out, None, None, "exists and is not a folder")
        if any(out.iterdir()) and not force and not _is_previous_generation(out):
            raise InputError(
                out, None, None, "folder is not empty and holds no previous generation; use --force to replace it"
            )
    built = build(preset, seed)
    try:  # staged beside ``out`` and renamed into place (what a killed run left is cleaned next time)
        with staged_output(out, force=True) as tmp:
            write(built, tmp)
    except OSError as e:
        raise InputError(out, None, None, f"cannot write the bench: {e.strerror or e}") from None
    return out
