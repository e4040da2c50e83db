"""``memeval export longmemeval-v2 RUN_DIR [--out DIR]``: a run written as LongMemEval-V2's harness
writes its run folders (per_question.jsonl, aggregated_metrics.json per domain, and the operating
point with its LAFS gain and interval)."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write a run in a bench's official output format (longmemeval-v2)"


def add_arguments(parser) -> None:
    parser.add_argument("format", choices=["longmemeval-v2"], help="the official format")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run folder holding records.jsonl")
    parser.add_argument("--out", metavar="DIR", help="folder to write (default: RUN_DIR/export_longmemeval_v2)")
    parser.add_argument("--tier", help="tier to export (default: the bench's only tier)")
    parser.add_argument("--epoch", type=int, default=0, help="epoch to export (default 0)")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples of the LAFS gain interval")


def run(args) -> int:
    from ..analysis.lme_v2_export import export_run  # on use: start-up time of every command

    out = Path(args.out) if args.out else Path(args.run_dir) / "export_longmemeval_v2"
    summary = export_run(args.run_dir, out, tier=args.tier, epoch=args.epoch, n_resamples=args.resamples)
    print(f"wrote {out}: {', '.join(summary['domains'])}")
    print(json.dumps(summary))
    return 0
