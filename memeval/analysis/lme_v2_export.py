"""A memeval run on a LongMemEval-V2 bench, written as the published harness writes its run folders,
so the repository's leaderboard scripts read it (``combine_aggregated_metrics.py``, step 1 of
``leaderboard/README.md``).

``export_run(run_dir, out)`` writes, per domain present (``web``, ``enterprise``)::

    OUT/<domain>/per_question.jsonl        one row per question, the harness's keys
    OUT/<domain>/aggregated_metrics.json   overall / by category / tokens / memory_context / memory_query
    OUT/<domain>/run_args.json             domain, tier, method, reader and judge models, official flag
    OUT/<domain>/runtime_inputs/questions.json, haystack.json
    OUT/operating_point.json               accuracy, latency, LAFS gain over the reference frontier and
                                           its 95% bootstrap interval (``analysis.lafs``)

Token counts are memeval's (approx-v1), not the Qwen3.5-9B processor's the harness uses; ``official``
is true only when the reader and judge models are the leaderboard's, the reader was shown images, the
bench is not text-only and the memory context cap is 200,000 tokens (``official_reasons`` says why not).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from ..atomic import write_jsonl, write_text
from ..bench.io import load_bench, read_json, read_questions
from ..errors import MemevalError
from ..run.folder import read_manifest
from ..run.records import read_records
from ..scoring import lme_v2
from ..systems.context import fit_memories
from .lafs import bootstrap_gain, lafs_gain, operating_point

__all__ = ["export_run", "aggregate", "NON_ABSTENTION", "ABSTENTION"]

NON_ABSTENTION = ("static", "dynamic", "procedure", "gotchas")
ABSTENTION = ("static-abs", "dynamic-abs", "procedure-abs")
COMBINED = {
    "static": ("static", "static-abs"),
    "dynamic": ("dynamic", "dynamic-abs"),
    "procedure": ("procedure", "procedure-abs"),
}


def _mean(rows: list[dict], key: str = "score") -> float | None:
    return sum(float(r[key]) for r in rows) / len(rows) if rows else None


def _breakdown(rows: list[dict]) -> dict:
    n = len(rows)
    if not n:
        return {"count": 0, "pct_correct": None, "pct_answered_wrong": None, "pct_unknown": None}
    unknown = sum(1 for r in rows if r["is_unknown"])
    correct = sum(1 for r in rows if r["score_bool"] and not r["is_unknown"])
    return {
        "count": n,
        "pct_correct": correct / n,
        "pct_answered_wrong": (n - correct - unknown) / n,
        "pct_unknown": unknown / n,
    }


def _timing(values: list[float]) -> dict:
    s = sorted(values)
    n = len(s)
    return {
        "avg_seconds": sum(s) / n if n else None,
        "p50_seconds": s[n // 2] if n else None,
        "p95_seconds": s[min(n - 1, int(0.95 * n))] if n else None,
        "max_seconds": s[-1] if n else None,
        "total_seconds": sum(s),
    }


def aggregate(rows: list[dict]) -> dict:
    """``aggregated_metrics.json`` of per-question rows (the harness's keys and rules)."""
    if not rows:
        raise MemevalError("no questions to aggregate")
    non = [r for r in rows if not r["is_abstention_problem"]]
    abst = [r for r in rows if r["is_abstention_problem"]]
    n = len(rows)
    prompt = sum(r["usage"]["prompt_tokens"] for r in rows)
    completion = sum(r["usage"]["completion_tokens"] for r in rows)
    hay = [r["haystack_ids"] for r in rows]
    shared = all(h == hay[0] for h in hay)
    out: dict[str, Any] = {
        "overall": {
            "overall_full_set": _mean(rows),
            "overall_non_abstention_only": _mean(non),
            "overall_abstention_only": _mean(abst),
            "count_all_questions": n,
            "count_non_abstention": len(non),
            "count_abstention": len(abst),
        },
        "non_abstention_by_category": {c: _breakdown([r for r in non if r["category"] == c]) for c in NON_ABSTENTION},
        "abstention_by_category": {c: _breakdown([r for r in abst if r["category"] == c]) for c in ABSTENTION},
        "combined_abstention_by_category": {
            c: _breakdown([r for r in rows if r["category"] in pair]) for c, pair in COMBINED.items()
        },
        "abstention_overall": _breakdown(abst),
        "tokens": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "avg_prompt_tokens": prompt / n,
            "avg_completion_tokens": completion / n,
            "avg_total_tokens": (prompt + completion) / n,
        },
        "memory_context": {
            "avg_original_tokens": sum(r["memory_context_original_token_count"] for r in rows) / n,
            "avg_final_tokens": sum(r["memory_context_token_count"] for r in rows) / n,
            "num_truncated_sequences": sum(1 for r in rows if r["memory_context_was_truncated"]),
        },
        "memory_query": _timing([r["memory_query_duration_seconds"] for r in rows]),
        "memory_post_query": _timing([r["memory_post_query_duration_seconds"] for r in rows]),
        "completed_at_utc": datetime.now(timezone.utc).isoformat(),
        "shared_haystack": shared,
    }
    if shared:
        out["shared_haystack_ids"] = hay[0]
    return out


def _reader_usage(rec: Mapping) -> dict:
    p = c = 0
    for e in rec.get("usage") or []:
        if isinstance(e, dict) and e.get("role") == "reader":
            p += int(e.get("prompt_tokens") or 0)
            c += int(e.get("completion_tokens") or 0)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _row(i: int, rec: Mapping, q, hay_ids: list[str], limit: int) -> dict:
    shown = [str(m) for m in rec.get("memories_returned") or []]
    objs = rec.get("memories") or [{} for _ in shown]
    kept = len(fit_memories(shown, rec.get("context_limit") or limit, keep="prefix").memories)
    context: list[dict] = []
    log: list[dict] = [{"type": "text", "text": "### Memory context:\n" + ("" if kept else "(empty)")}]
    for text, obj in zip(shown[:kept], objs[:kept]):
        context.append({"type": "text", "value": text})
        log.append({"type": "text", "text": text})
        image = obj.get("image") if isinstance(obj, dict) else None
        if isinstance(image, str):
            context.append({"type": "image", "value": image})
            log.append({"type": "image_path", "image_path": image})
    block = f"\n\n### Question to answer:\n{q.text_to_ask}"
    log.append({"type": "text", "text": block})
    qimage = q.extra.get("question_image")
    if qimage:
        log.append({"type": "image_path", "image_path": qimage})
    raw = rec.get("answer") or ""
    parsed = lme_v2.extract_boxed(raw)
    score = float(rec["official_score"])
    used = int(rec.get("context_tokens") or 0)
    qtype = str(q.extra["question_type"])
    name = lme_v2.parse_spec(q.extra["eval_function"])[0]
    return {
        "index": i,
        "stream_index": i,
        "question_id": q.id,
        "question_type": qtype,
        "category": lme_v2.CATEGORY[qtype],
        "is_abstention_problem": name == "llm_abstention_checker",
        "eval_function": q.extra["eval_function"],
        "question_text": q.text_to_ask,
        "question_image": qimage,
        "haystack_ids": hay_ids,
        "memory_context": context,
        "memory_query_duration_seconds": float(rec["latency_ms"]) / 1000,
        "memory_post_query_duration_seconds": 0.0,
        "memory_post_query_metadata": None,
        "memory_context_original_token_count": used + int(rec.get("context_dropped_tokens") or 0),
        "memory_context_token_count": used,
        "memory_context_was_truncated": bool(rec.get("context_truncated")),
        "prompt_messages": [
            {"role": "system", "content": lme_v2.reader_prompt(str(q.extra.get("domain", "web")))},
            {"role": "user", "content": log},
        ],
        "answer_gold": q.gold_answer,
        "response_raw": raw,
        "response_parsed_boxed": parsed,
        "is_unknown": lme_v2.is_unknown(parsed),
        "score": score,
        "score_bool": score == 1.0,
        "usage": _reader_usage(rec),
        "timestamp_utc": rec.get("started_at"),
    }


def _official(manifest: Mapping, bench, records: list[dict]) -> list[str]:
    grader = (manifest.get("config") or {}).get("grader") or {}
    why = lme_v2.official_reader_rules(grader.get("reader"), grader.get("judge"))
    if bench.extra.get("text_only") or not bench.extra.get("official", True):
        why.append("the bench was imported --text-only")
    limits = {r.get("context_limit") for r in records}
    if limits != {lme_v2.CONTEXT_MAX_TOKENS}:
        why.append(f"memory context cap {sorted(map(str, limits))} is not {lme_v2.CONTEXT_MAX_TOKENS}")
    return why


def export_run(run_dir, out, *, tier: str | None = None, epoch: int = 0, n_resamples: int = 2000) -> dict:
    """Write the run's LongMemEval-V2 folders under ``out`` (see the module docstring); returns the
    operating point's summary. A question without an official score (an error, an ungraded rubric,
    a run not in answer mode) is refused: the leaderboard scores every question."""
    run_dir, out = Path(run_dir), Path(out)
    manifest = read_manifest(run_dir)
    bench = load_bench((manifest.get("config") or {}).get("bench", {}).get("root") or "")
    if bench.extra.get("format") != "longmemeval-v2":
        raise MemevalError(f"{run_dir}: the run's bench is not a LongMemEval-V2 import")
    tiers = [t.name for t in bench.tiers]
    tname = tier or tiers[0]
    t = bench.tier(tname)
    questions = {q.id: q for q in read_questions(Path(bench.root) / t.questions_file)}
    hay = read_json(Path(bench.root) / str(bench.extra["haystacks_file"]))
    records = [r for r in read_records(run_dir) if r.get("tier") == tname and int(r.get("epoch") or 0) == epoch]
    if not records:
        raise MemevalError(f"{run_dir}: no records for tier {tname!r}, epoch {epoch}")
    missing = [r["qid"] for r in records if r.get("official_score") is None or r.get("latency_ms") is None]
    if missing:
        raise MemevalError(
            f"{run_dir}: {len(missing)} of {len(records)} questions have no official score (first: {missing[0]}); "
            "run in answer mode with a judge, then export"
        )
    unasked = sorted(set(questions) - {r["qid"] for r in records})
    if unasked:
        raise MemevalError(f"{run_dir}: {len(unasked)} questions of the tier were not asked (first: {unasked[0]})")
    why = _official(manifest, bench, records)
    grader = (manifest.get("config") or {}).get("grader") or {}
    method = str(((manifest.get("config") or {}).get("system") or {}).get("name") or manifest.get("run_id"))
    by_domain: dict[str, list[dict]] = {}
    for i, rec in enumerate(records):
        q = questions[rec["qid"]]
        by_domain.setdefault(str(q.extra.get("domain")), []).append(
            _row(i, rec, q, hay[q.haystack], lme_v2.CONTEXT_MAX_TOKENS)
        )
    for domain, rows in by_domain.items():
        d = out / domain
        d.mkdir(parents=True, exist_ok=True)
        write_jsonl(d / "per_question.jsonl", rows)
        _json(d / "aggregated_metrics.json", aggregate(rows))
        _json(
            d / "run_args.json",
            {
                "domain": domain,
                "tier": bench.extra.get("lme_v2_tier", tname),
                "method": method,
                "model": ((grader.get("reader") or {}).get("model")),
                "evaluator_model": ((grader.get("judge") or {}).get("model")),
                "max_completion_tokens": lme_v2.READER_MAX_TOKENS,
                "memory_context_max_tokens": sorted({r.get("context_limit") for r in records}, key=str)[0],
                "memeval_run": str(manifest.get("run_id")),
                "official": not why,
                "official_reasons": why,
            },
        )
        (d / "runtime_inputs").mkdir(exist_ok=True)
        _json(d / "runtime_inputs" / "questions.json", [_question_row(questions[r["question_id"]]) for r in rows])
        _json(d / "runtime_inputs" / "haystack.json", {r["question_id"]: r["haystack_ids"] for r in rows})
    point, detail = operating_point(records, method)
    qids = list(detail["scores"])
    iv = bootstrap_gain(
        str(bench.extra.get("lme_v2_tier", tname)),
        {method: [detail["scores"][k] for k in qids]},
        {method: [detail["seconds"][k] for k in qids]},
        n_resamples=n_resamples,
    )
    summary = {
        "method": method,
        "tier": bench.extra.get("lme_v2_tier", tname),
        "accuracy": point.acc,
        "latency_seconds": point.latency,
        "n_questions": detail["n"],
        "lafs_gain": lafs_gain(str(bench.extra.get("lme_v2_tier", tname)), [point]),
        "lafs_gain_interval": {"lo": iv.lo, "hi": iv.hi, "level": iv.level, "resamples": iv.n_resamples},
        "official": not why,
        "official_reasons": why,
        "domains": sorted(by_domain),
    }
    _json(out / "operating_point.json", summary)
    return summary


def _question_row(q) -> dict:
    image = q.extra.get("question_image")
    return {
        "id": q.id,
        "domain": q.extra.get("domain"),
        "environment": q.extra.get("environment"),
        "question_type": q.extra.get("question_type"),
        "question": {"text": q.text_to_ask, "image": image} if image else q.text_to_ask,
        "answer": q.gold_answer,
        "eval_function": q.extra.get("eval_function"),
    }


def _json(path: Path, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=True) + "\n")
