"""``memeval audit DIR``: check a bench folder; exit 0 when every check passes, 1 naming each
failure on its own line, 2 on malformed input."""

from __future__ import annotations

import argparse
import json

from ..atomic import write_text
from ..audit import audit

__all__ = ["HELP", "add_arguments", "run"]

HELP = "check a bench folder: evidence, golds, tier nesting, IDK floor and evidence ceiling"


def add_arguments(parser) -> None:
    parser.add_argument("bench", metavar="DIR", help="bench folder (holds bench.yaml)")
    parser.add_argument(
        "--tiers",
        action="append",
        metavar="TIER[,TIER]",
        help="tiers to audit, comma-separated, option repeatable (default: all)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the full report as JSON")
    parser.add_argument(
        "--verbose", action="store_true", help="every figure of every check (default: one short line per check)"
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default: one short line per check, then the findings) or json (the full report on stdout)",
    )
    parser.add_argument(
        "--max-findings",
        type=_positive,
        default=100,
        metavar="N",
        help="findings kept per check and tier (counts stay complete; default 100)",
    )


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return n


def run(args) -> int:
    tiers = None
    if args.tiers:
        tiers = [t for arg in args.tiers for t in arg.split(",") if t]
    report = audit(args.bench, tiers, max_findings=args.max_findings)
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(report.lines(verbose=args.verbose)))
    if args.json:
        write_text(args.json, json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    return 0 if report.passed else 1
