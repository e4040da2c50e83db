"""``memeval export longmemeval-v2`` read by LongMemEval-V2's own leaderboard scripts.

The scripts are fetched, never shipped: a folder holding ``compute_lafs.py``,
``combine_aggregated_metrics.py`` and ``submission_utils.py`` from the repository's ``leaderboard/``
(``git -C <clone> show HEAD:leaderboard/<file> > DIR/<file>``).

    .venv/bin/python benchmarks/lme_v2_export_check.py --official DIR

On the fixture (tests/lme_v2_fixture.py, small tier) it runs ``bm25`` in answer mode against a
scripted loopback reader and judge named as the leaderboard requires (``Qwen/Qwen3.5-9B``,
``gpt-5.2``), exports the run, then: ``submission_utils.validate_run`` on each domain folder (the
checks of leaderboard step 1), ``combine_aggregated_metrics.py`` (as a program) on the two
``aggregated_metrics.json``, ``build_metric_overview`` and ``compute_lafs.lafs_summary_for_submission``
on the combined metrics; and compares accuracy, latency and LAFS gain with memeval's
``operating_point.json``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lme_v2_fixture import make_fixture  # noqa: E402

from memeval.cli import main as memeval  # noqa: E402
from memeval.llm import ChatClient  # noqa: E402
from memeval.run.runner import run_system  # noqa: E402
from memeval.scoring.judge import Judge, Reader  # noqa: E402
from memeval.testing.chat_stub import ScriptedChatServer  # noqa: E402


def responder(body: dict) -> str:
    msgs = body["messages"]
    first = msgs[0]["content"] if isinstance(msgs[0]["content"], str) else ""
    if first.startswith("You are a strict grader"):
        return '{"label": 1, "reason": "stub"}'
    if first.startswith("You are an experienced colleague"):
        text = json.dumps(msgs[-1]["content"])
        return r"\boxed{$29.99}" if "kettle" in text else r"\boxed{A, B}"
    return '{"verdict": "correct", "evidence": "stub"}'


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--official", required=True, type=Path, help="folder with the fetched leaderboard scripts")
    args = ap.parse_args()
    sys.path.insert(0, str(args.official))
    lafs_mod = importlib.import_module("compute_lafs")
    sub = importlib.import_module("submission_utils")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        data = make_fixture(t / "data")
        assert (
            memeval(["import", "longmemeval-v2", str(data), "--tier", "small", "--out", str(t / "b"), "--no-progress"])
            == 0
        )
        with ScriptedChatServer(responder) as srv:
            run_system(
                str(t / "b"),
                "bm25",
                mode="answer",
                judge=Judge(ChatClient(srv.base_url, "gpt-5.2")),
                reader=Reader(ChatClient(srv.base_url, "Qwen/Qwen3.5-9B"), images=True),
                out=t / "run",
                progress=False,
            )
        out = t / "export"
        assert memeval(["export", "longmemeval-v2", str(t / "run"), "--out", str(out), "--resamples", "200"]) == 0
        mine = json.loads((out / "operating_point.json").read_text())
        # the folder names leaderboard step 1 expects: <method>_<domain>_<tier>
        for d in ("web", "enterprise"):
            (out / d).rename(out / f"bm25_{d}_small")
        web = sub.validate_run(out / "bm25_web_small", "web", "small")
        ent = sub.validate_run(out / "bm25_enterprise_small", "enterprise", "small")
        sub.validate_run_pair(web, ent)
        combined_path = t / "combined.json"
        subprocess.run(
            [
                sys.executable,
                str(args.official / "combine_aggregated_metrics.py"),
                str(out / "bm25_web_small" / "aggregated_metrics.json"),
                str(out / "bm25_enterprise_small" / "aggregated_metrics.json"),
                "-o",
                str(combined_path),
            ],
            check=True,
        )
        combined = json.loads(combined_path.read_text())
        overview = sub.build_metric_overview(combined)
        point = lafs_mod.Point("bm25", overview["overall_full_set"] * 100, overview["memory_query_avg_seconds"])
        summary = lafs_mod.lafs_summary_for_submission("small", [point])
        print("| figure | leaderboard scripts on the export | memeval operating_point.json |")
        print("|---|---:|---:|")
        print(f"| accuracy (pp) | {point.acc:.6f} | {mine['accuracy']:.6f} |")
        print(f"| latency (s) | {point.latency:.9f} | {mine['latency_seconds']:.9f} |")
        print(f"| LAFS gain | {summary['lafs_gain']:.9f} | {mine['lafs_gain']:.9f} |")
        print(
            f"\nvalidate_run (step 1 checks) passed for web ({web.question_count} q) and enterprise ({ent.question_count} q)"
        )
        print(f"memeval: official={mine['official']} reasons={mine['official_reasons']}")
        print(
            f"memeval gain interval: [{mine['lafs_gain_interval']['lo']:.3f}, {mine['lafs_gain_interval']['hi']:.3f}]"
        )
        ok = (
            abs(point.acc - mine["accuracy"]) < 1e-9
            and abs(point.latency - mine["latency_seconds"]) < 1e-12
            and abs(summary["lafs_gain"] - mine["lafs_gain"]) < 1e-9
        )
        print("agree" if ok else "DISAGREE")


if __name__ == "__main__":
    main()
