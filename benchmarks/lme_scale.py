"""LongMemEval at the scale users bring, beside LongMemEval's own ``run_retrieval.py`` (issue 31).

One LongMemEval-format file, run both ways, scored by LongMemEval's own eval code, the issue's table
printed in one go::

    PYTHONPATH=TREE .venv/bin/python benchmarks/lme_scale.py \\
        [--locomo PATH | --haystacks 400 --sessions 50 --turns 12 --chars 240] \\
        [--limit N] [--runs 3] [--reference-dir DIR --reference-python PY] [--tmp DIR]

The file (``longmemeval_m.json``, in a temporary folder deleted afterwards):

- ``--locomo PATH``: LoCoMo (snap-research/locomo: ``locomo10.json``, or the ``locomo10_v2`` folder
  or zip of one file per conversation) converted to LongMemEval's format, one instance per question,
  its haystack the question's whole conversation (1,986 instances, 1,194,140 turns; ``--limit N``
  keeps the first N). Conversion: sessions keep LoCoMo's dates; every turn is ``role: user`` (both
  speakers are people, and ``run_retrieval.py`` indexes user turns only, so both retrievers search the
  same turns); a turn's content is its text (plus `` and shared <caption>`` for an image, as memeval's
  LoCoMo loader shows it); evidence turns carry ``has_answer`` and their sessions are named
  ``answer_...`` (how ``run_retrieval.py`` finds its targets); adversarial (category 5) questions get
  LongMemEval's ``_abs`` suffix (abstention: no target, left out of recall).
- otherwise: generated short conversational turns (``--haystacks`` instances of ``--sessions``
  sessions of ``--turns`` turns of ~``--chars`` characters, one ``has_answer`` user turn each;
  ``--haystacks 2000 --sessions 50 --turns 12`` gives LongMemEval-M's 1.2M turns).

Each of ``--runs`` rounds runs, in fresh processes, interleaved: memeval's ``import longmemeval``
then ``run --system bm25 --mode dry`` (a fresh bench each round: the validity gate is graded); and,
with ``--reference-dir`` (a checkout of xiaowu0162/LongMemEval, fetched, never shipped; run with
``--reference-python``, an environment holding its imports: torch, sentence-transformers,
transformers, openai, scikit-learn, rank-bm25, numpy<2), ``src/retrieval/run_retrieval.py
--retriever flat-bm25 --granularity turn`` end to end, and its retrieval loop alone
(``batch_get_retrieved_context_and_eval`` over every instance in one process, timed around the loop).
Figures: CPU seconds (user+sys of the process and its children), wall seconds, peak RSS (the largest
single process, as ``/usr/bin/time -v`` reports it; for the reference also the largest sum over its
process tree, sampled every 0.2 s: it runs a pool of 10 workers). Medians over rounds.

recall_any@10: LongMemEval's ``src/retrieval/eval_utils.evaluate_retrieval`` at turn level, run by
``--reference-python`` (it needs numpy<2), over the instances ``run_retrieval.py`` averages (not
``_abs``, at least one ``has_answer`` user turn); memeval's ranking is its records'
``retrieved_turns`` mapped to the same corpus ids (turns outside the reference's corpus, i.e.
assistant turns of the generated file, are dropped from it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

WORDS = (
    "i you we they it the a an and but so because really think maybe going went got have had was were is "
    "are be been do did make made take took see saw know knew want like love need tried trying work job "
    "office home kitchen garden dog cat kids friend sister brother mom dad weekend morning evening night "
    "today yesterday tomorrow week month year trip city beach park movie book song dinner lunch coffee tea "
    "recipe class gym run yoga bike car bus train plan plans idea ideas help thanks great good nice busy "
    "tired happy excited worried sure yes no just also still already never always sometimes"
).split()
TYPES = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")
#: LoCoMo category -> a LongMemEval question_type (memeval's axes for LoCoMo: MULTI, TEMPORAL, IMPLICIT,
#: BASIC; 5, adversarial, becomes an ``_abs`` abstention question)
LOCOMO_TYPES = {
    1: "multi-session",
    2: "temporal-reasoning",
    3: "single-session-preference",
    4: "single-session-user",
    5: "single-session-user",
}


def sentence(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    n = 0
    while n < chars:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out).capitalize() + "."


def write_lme(path: Path, haystacks: int, sessions: int, turns: int, chars: int = 240, seed: int = 0) -> int:
    """Write a LongMemEval-format file of generated turns; returns its turn count. The answer session's
    id holds ``answer`` and its turns carry ``has_answer`` (as ``run_retrieval.py`` expects)."""
    rng = random.Random(seed)
    n_turns = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for h in range(haystacks):
            fact = f"my {rng.choice(['neighbour', 'cousin', 'teacher'])} is called Zorblax{h}"
            ans_s = rng.randrange(sessions)
            ans_t = rng.randrange(turns // 2) * 2  # a user turn
            hs, ids, dates = [], [], []
            for s in range(sessions):
                sess = []
                for t in range(turns):
                    text = sentence(rng, chars)
                    has = s == ans_s and t == ans_t
                    if has:
                        text = f"By the way, {fact}. " + text
                    turn: dict[str, Any] = {"role": "user" if t % 2 == 0 else "assistant", "content": text}
                    if s == ans_s:
                        turn["has_answer"] = has
                    sess.append(turn)
                hs.append(sess)
                ids.append(f"answer_s{h}_{s}" if s == ans_s else f"s{h}_{s}")
                dates.append(f"2023/{1 + s * 11 // sessions:02d}/{1 + s % 28:02d} (Mon) 10:{s % 60:02d}")
                n_turns += turns
            inst = {
                "question_id": f"q{h:05d}",
                "question_type": TYPES[h % len(TYPES)],
                "question": "What is my neighbour called?",
                "answer": f"Zorblax{h}",
                "question_date": "2023/12/30 (Sat) 23:59",
                "haystack_session_ids": ids,
                "haystack_dates": dates,
                "haystack_sessions": hs,
                "answer_session_ids": [ids[ans_s]],
            }
            fh.write(("," if h else "") + json.dumps(inst))
        fh.write("]")
    return n_turns


def locomo_samples(path: Path) -> Iterator[dict]:
    """LoCoMo's conversations: ``locomo10.json`` (a list), or the ``locomo10_v2`` folder or zip of one
    file per conversation (``NN.json``, the conversation's fields and ``qa`` at the top level)."""

    def wrap(name: str, obj: dict) -> dict:
        if "conversation" in obj:
            return obj
        conv = {k: v for k, v in obj.items() if k != "qa"}
        return {"sample_id": f"conv-{Path(name).stem}", "conversation": conv, "qa": obj.get("qa", [])}

    if path.is_dir():
        for p in sorted(path.rglob("*.json"), key=lambda p: p.name):
            yield wrap(p.name, json.loads(p.read_text(encoding="utf-8")))
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for name in sorted((n for n in z.namelist() if n.endswith(".json")), key=lambda n: Path(n).name):
                yield wrap(name, json.loads(z.read(name)))
    else:
        for i, obj in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            yield wrap(f"{i}.json", obj)


def _lme_date(d) -> str:
    return f"{d:%Y/%m/%d} ({d:%a}) {d:%H:%M}"


def write_locomo_lme(src: Path, path: Path, limit: int | None = None) -> tuple[int, int]:
    """Write LoCoMo converted to LongMemEval's format (module docstring); returns (instances, turns)."""
    from memeval.bench.loaders.locomo import convert_sample, parse_date

    n_inst = n_turns = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for index, obj in enumerate(locomo_samples(src)):
            turns, questions, _ = convert_sample(obj, src, index)
            conv = obj["conversation"]
            by_session: dict[int, list] = {}
            for t in turns:
                by_session.setdefault(int(t.session_id), []).append(t)
            dates = {n: parse_date(conv[f"session_{n}_date_time"]) for n in by_session}
            asked = _lme_date(max(dates.values()))
            hay = turns[0].haystack
            for q in questions:
                if limit is not None and n_inst >= limit:
                    break
                cat = q.extra["locomo_category"]
                ev = set(q.evidence_turns)
                ev_sessions = {int(t.session_id) for t in turns if t.turn_id in ev}
                sess_ids, sessions = [], []
                for n, sturns in by_session.items():
                    answer = n in ev_sessions
                    sess_ids.append(f"answer_{hay}_D{n}" if answer else f"{hay}_D{n}")
                    sessions.append(
                        [
                            {"role": "user", "content": t.text, **({"has_answer": t.turn_id in ev} if answer else {})}
                            for t in sturns
                        ]
                    )
                    n_turns += len(sturns)
                inst = {
                    "question_id": q.id + ("_abs" if cat == 5 else ""),
                    "question_type": LOCOMO_TYPES[cat],
                    "question": q.question_en,
                    "answer": q.gold_answer or str(q.extra.get("adversarial_answer", "")),
                    "question_date": asked,
                    "haystack_session_ids": sess_ids,
                    "haystack_dates": [_lme_date(dates[n]) for n in by_session],
                    "haystack_sessions": sessions,
                    "answer_session_ids": [s for s in sess_ids if s.startswith("answer_")],
                }
                fh.write(("," if n_inst else "") + json.dumps(inst))
                n_inst += 1
        fh.write("]")
    return n_inst, n_turns


@dataclass(frozen=True)
class Cost:
    cpu: float  # user+sys seconds of the process and the children it waited for
    wall: float
    rss: float  # MiB, the largest single process of the tree (ru_maxrss, as /usr/bin/time -v reports)
    tree_rss: float  # MiB, the largest sampled sum of RSS over the process tree
    out: str = ""


def _tree_rss(root: int) -> int:
    """Bytes of RSS summed over ``root`` and its descendants (Linux /proc; 0 where unreadable)."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    total, todo, page = 0, [root], os.sysconf("SC_PAGE_SIZE")
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            pass
    return total


def child(cmd: list[str], cwd: str | None = None, env: dict | None = None, capture: bool = False) -> Cost:
    """Run ``cmd`` as a fresh process; its CPU, wall, peak RSS (own and over its process tree). Its
    output goes to files, never pipes (a pool's workers writing progress bars to a full pipe would block)."""
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out_f if capture else subprocess.DEVNULL, stderr=err_f)
        peak, done = [0], threading.Event()

        def sample() -> None:
            while not done.wait(0.2):
                peak[0] = max(peak[0], _tree_rss(p.pid))

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        th.join()
        p.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read().decode(errors="replace"), err_f.read().decode(errors="replace")
    if p.returncode:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{err[-3000:]}")
    rss = ru.ru_maxrss / 1024
    return Cost(ru.ru_utime + ru.ru_stime, wall, rss, max(peak[0] / 2**20, rss), out)


#: run by --reference-python in --reference-dir: the retrieval loop of run_retrieval.py alone, timed
LOOP = """
import argparse, json, multiprocessing as mp, sys, time
sys.path.insert(0, ".")
from src.retrieval import run_retrieval as rr
args = argparse.Namespace(retriever="flat-bm25", granularity="turn", index_expansion_method="none",
                          index_expansion_result_join_mode="none", index_expansion_result_cache=None,
                          index_expansion_llm=None, cache_dir=None)
data = json.load(open(sys.argv[1]))
mp.current_process().name = "SpawnPoolWorker-1"  # the worker's gpu id comes from its name
c, w = time.process_time(), time.perf_counter()
rr.batch_get_retrieved_context_and_eval(data, args)
print(json.dumps({"cpu": time.process_time() - c, "wall": time.perf_counter() - w}))
"""

#: run by --reference-python in --reference-dir: recall_any@10 of rankings by LongMemEval's eval code
SCORE = """
import json, sys
sys.path.insert(0, ".")
from src.retrieval.eval_utils import evaluate_retrieval
data = json.load(open(sys.argv[1]))
ranked = json.load(open(sys.argv[2]))  # question_id -> memeval's retrieved turn ids (1-based, date order)
from datetime import datetime
import re
def when(s):
    y, mo, d, hh, mm = re.match(r"\\s*(\\d{4})/(\\d{1,2})/(\\d{1,2})(?:\\s*\\(\\w+\\))?\\s*(?:(\\d{1,2}):(\\d{2}))?", s).groups()
    return datetime(int(y), int(mo), int(d), int(hh or 0), int(mm or 0))
out, dropped = [], 0
for e in data:
    if "_abs" in e["question_id"]:
        continue
    if not any(t.get("has_answer") for s in e["haystack_sessions"] for t in s if t["role"] == "user"):
        continue
    # corpus ids as run_retrieval.process_item_flat_index makes them (granularity turn: user turns)
    corpus_ids, index_of, tid = [], {}, 0
    order = sorted(range(len(e["haystack_dates"])), key=lambda i: (when(e["haystack_dates"][i]), i))
    where = {}
    for i in order:  # memeval's turn ids: sessions in date order, turns in order
        for j, t in enumerate(e["haystack_sessions"][i]):
            tid += 1
            where[tid] = (i, j)
    for i, (sid, sess) in enumerate(zip(e["haystack_session_ids"], e["haystack_sessions"])):
        for j, t in enumerate(sess):
            if t["role"] == "user":
                cid = sid + "_" + str(j + 1)
                if "answer" in sid and not t["has_answer"]:
                    cid = cid.replace("answer", "noans")
                index_of[(i, j)] = len(corpus_ids)
                corpus_ids.append(cid)
    correct = list(set(c for c in corpus_ids if "answer" in c))
    rankings = []
    for t in ranked.get(e["question_id"]) or []:
        k = index_of.get(where.get(t))
        if k is None:
            dropped += 1
        else:
            rankings.append(k)
    out.append(evaluate_retrieval(rankings, correct, corpus_ids, k=10)[0])
print(json.dumps({"recall_any@10": sum(out) / len(out), "n": len(out), "dropped": dropped,
                  "missing": sum(1 for e in data if e["question_id"] not in ranked)}))
"""


def reference_recall(log: Path) -> tuple[float, int]:
    """recall_any@10 (turn) averaged as run_retrieval.py averages it, from its retrieval log."""
    xs = []
    with open(log, encoding="utf-8") as fh:
        for line in fh:
            e = json.loads(line)
            if "_abs" in e["question_id"]:
                continue
            if not any(t.get("has_answer") for s in e["haystack_sessions"] for t in s if t["role"] == "user"):
                continue
            xs.append(e["retrieval_results"]["metrics"]["turn"]["recall_any@10"])
    return sum(xs) / len(xs), len(xs)


def memeval_rankings(run_dir: Path) -> dict[str, list[int]]:
    """question id -> retrieved turn ids, from a run's records (an error record ends the benchmark)."""
    out: dict[str, list[int]] = {}
    with open(run_dir / "records.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("error"):
                sys.exit(f"memeval record {r.get('qid')}: error {r['error']}")
            out[r["qid"]] = r.get("retrieved_turns") or []
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", type=Path, default=None, help="LoCoMo's locomo10.json (or its v2 folder/zip)")
    ap.add_argument("--limit", type=int, default=None, help="with --locomo: the first N questions only")
    ap.add_argument("--haystacks", type=int, default=400)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--chars", type=int, default=240)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reference-dir", type=Path, default=None, help="a checkout of xiaowu0162/LongMemEval")
    ap.add_argument("--reference-python", default=sys.executable, help="a Python with run_retrieval.py's imports")
    ap.add_argument("--no-loop", action="store_true", help="skip timing the reference's loop alone")
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(dir=args.tmp))
    py = [sys.executable, "-m", "memeval"]
    ref = args.reference_dir.resolve() if args.reference_dir else None
    ref_env = {**os.environ, "PYTHONPATH": str(ref), "PYTHONIOENCODING": "utf-8"} if ref else None
    try:
        src = tmp / "longmemeval_m.json"
        if args.locomo:
            n_inst, n = write_locomo_lme(args.locomo, src, args.limit)
            what = f"LoCoMo ({args.locomo.name}) in LongMemEval's format"
        else:
            n_inst, n = args.haystacks, write_lme(src, args.haystacks, args.sessions, args.turns, args.chars)
            what = "generated short turns"
        mib = src.stat().st_size / 2**20
        print(f"{src.name}: {what}, {n_inst:,} haystacks, {n:,} turns, {mib:.0f} MiB", flush=True)
        imp: list[Cost] = []
        run: list[Cost] = []
        e2e: list[Cost] = []
        loop: list[Cost] = []
        for i in range(args.runs):
            if ref:
                out_dir = tmp / f"ref{i}"
                out_dir.mkdir()
                cmd = [args.reference_python, str(ref / "src/retrieval/run_retrieval.py"), "--in_file", str(src)]
                cmd += ["--out_dir", str(out_dir), "--retriever", "flat-bm25", "--granularity", "turn"]
                e2e.append(child(cmd, cwd=str(ref / "src/retrieval"), env=ref_env, capture=True))
                c = e2e[-1]
                print(
                    f"  round {i}: reference end to end {c.cpu:.1f} CPU-s, {c.wall:.1f} s, {c.rss:.0f} MiB", flush=True
                )
                if not args.no_loop:
                    c = child([args.reference_python, "-c", LOOP, str(src)], cwd=str(ref), env=ref_env, capture=True)
                    t = json.loads(c.out.strip().splitlines()[-1])
                    loop.append(Cost(t["cpu"], t["wall"], c.rss, c.tree_rss))
            bench = tmp / f"bench{i}"
            imp.append(child([*py, "import", "longmemeval", str(src), "--out", str(bench)]))
            rdir = tmp / f"run{i}"
            cmd = [*py, "run", "--bench", str(bench), "--system", "bm25", "--mode", "dry", "--out", str(rdir)]
            run.append(child([*cmd, "--no-progress"]))
            a, b = imp[-1], run[-1]
            print(
                f"  round {i}: import {a.cpu:.1f} CPU-s {a.rss:.0f} MiB, run {b.cpu:.1f} CPU-s {b.rss:.0f} MiB",
                flush=True,
            )
            if i + 1 < args.runs:
                shutil.rmtree(bench)
        print_table(args, tmp, src, n, imp, run, e2e, loop, ref, ref_env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def print_table(args, tmp, src, n, imp, run, e2e, loop, ref, ref_env) -> None:
    rounds = len(imp)
    m_cpu = med([a.cpu + b.cpu for a, b in zip(imp, run)])
    m_wall = med([a.wall + b.wall for a, b in zip(imp, run)])
    m_rss = max(max(c.rss for c in imp), max(c.rss for c in run))
    print(f"\nmedians over {rounds} round(s); CPU = user+sys seconds; RSS = peak MiB of the largest process")
    print(f"memeval import: {med([c.cpu for c in imp]):.1f} CPU-s, {med([c.wall for c in imp]):.1f} s wall, ", end="")
    print(
        f"{max(c.rss for c in imp):.0f} MiB  (import: {(src.stat().st_size / 2**20) / med([c.cpu for c in imp]):.1f} MiB per CPU-s)"
    )
    print(f"memeval run:    {med([c.cpu for c in run]):.1f} CPU-s, {med([c.wall for c in run]):.1f} s wall, ", end="")
    print(f"{max(c.rss for c in run):.0f} MiB")
    rows = [("| figure | memeval | reference | ratio (reference / memeval) | goal |"), "|---|---|---|---|---|"]
    rec = None
    if ref:
        r_cpu, r_wall = med([c.cpu for c in e2e]), med([c.wall for c in e2e])
        r_rss, r_tree = max(c.rss for c in e2e), max(c.tree_rss for c in e2e)
        print(f"reference run_retrieval.py: {r_cpu:.1f} CPU-s, {r_wall:.1f} s wall, {r_rss:.0f} MiB ", end="")
        print(f"(process tree {r_tree:.0f} MiB)")
        rows.append(
            f"| bm25 end to end (`import` + `run` vs `run_retrieval.py`), CPU | {m_cpu:.1f} s | {r_cpu:.1f} s | "
            f"{r_cpu / m_cpu:.2f}× | ≥ 5× |"
        )
        rows.append(f"| the same, wall | {m_wall:.1f} s | {r_wall:.1f} s | {r_wall / m_wall:.2f}× | — |")
        if loop:
            l_cpu, l_wall = med([c.cpu for c in loop]), med([c.wall for c in loop])
            rc, rw = med([c.cpu for c in run]), med([c.wall for c in run])
            print(f"reference retrieval loop alone: {l_cpu:.1f} CPU-s, {l_wall:.1f} s wall")
            rows.append(
                f"| `run` alone vs its retrieval loop, CPU | {rc:.1f} s | {l_cpu:.1f} s | {l_cpu / rc:.2f}× | ≥ 8× |"
            )
            rows.append(f"| the same, wall | {rw:.1f} s | {l_wall:.1f} s | {l_wall / rw:.2f}× | — |")
        rows.append(
            f"| peak RSS (largest process; reference's pool of 10 summed: {r_tree:.0f} MiB) | {m_rss:.0f} MiB | "
            f"{r_rss:.0f} MiB | {r_rss / m_rss:.2f}× | ≤ 300 MiB |"
        )
        log = next((tmp / "ref0").glob("*_retrievallog_turn_flat-bm25"))
        rec, rec_n = reference_recall(log)
        ranked = tmp / "memeval_ranked.json"
        ranked.write_text(json.dumps(memeval_rankings(tmp / f"run{rounds - 1}")), encoding="utf-8")
        c = child([args.reference_python, "-c", SCORE, str(src), str(ranked)], cwd=str(ref), env=ref_env, capture=True)
        mine = json.loads(c.out.strip().splitlines()[-1])
        rows.append(
            f"| recall_any@10 (turn) by LongMemEval's eval code, n = {mine['n']} (reference n = {rec_n}) | "
            f"{mine['recall_any@10']:.3f} | {rec:.3f} | — | keep ≥ |"
        )
        if mine["dropped"] or mine["missing"]:
            print(
                f"memeval ranking: {mine['dropped']} retrieved turns outside the reference's corpus dropped, ", end=""
            )
            print(f"{mine['missing']} questions without a record")
    else:
        rows.append(f"| memeval `import` + `run`, CPU | {m_cpu:.1f} s | — | — | — |")
        rows.append(f"| peak RSS | {m_rss:.0f} MiB | — | — | ≤ 300 MiB |")
    print(f"\n{n:,} turns")
    print("\n".join(rows))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
