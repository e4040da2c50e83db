"""``memeval export-longmemeval RUN_DIR --out FILE``: a run's answers as LongMemEval hypotheses."""

from __future__ import annotations

import json
from pathlib import Path

from ..bench.loaders.longmemeval import export_hypotheses
from ..run.records import read_records

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write a run's answers as LongMemEval hypotheses ({question_id, hypothesis} per line)"


def add_arguments(parser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run folder holding records.jsonl")
    parser.add_argument("--out", required=True, metavar="FILE", help="hypotheses file (JSON lines)")
    parser.add_argument("--tier", help="tier to export (required when the run has several)")
    parser.add_argument("--epoch", type=int, help="epoch to export (default: the lowest)")


def run(args) -> int:
    records = read_records(Path(args.run_dir))  # the records that count: a re-asked question's newest
    summary = export_hypotheses(records, args.out, tier=args.tier, epoch=args.epoch)
    print(json.dumps(summary))
    return 0
