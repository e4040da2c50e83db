"""``memeval attribute RUN``: where each miss of a run broke -- write, retrieval or reader
(``analysis.attribution``). Writes a new run folder (``RUN_attributed``) and prints it; the headline on
stderr says the counts."""

from __future__ import annotations

import sys

from .run import _positive_int, add_model_arguments

HELP = "attribute each miss of a run to write, retrieval or reader loss (new run folder; same reader and judge)"


def add_arguments(p) -> None:
    p.add_argument("run", metavar="RUN", help="run folder (holding manifest.json and records.jsonl)")
    p.add_argument("--out", help="new run folder (default: <run>_attributed beside the source)")
    p.add_argument("--bench", help="bench folder (default: the one the source manifest names)")
    p.add_argument(
        "--system",
        help="the system to re-ingest for its stored dump (e.g. http://HOST:PORT of a restarted server); "
        "default: the run's own",
    )
    p.add_argument(
        "--no-reingest",
        action="store_true",
        help="ask no stored dump (write and retrieval loss then merge as memory_loss)",
    )
    p.add_argument(
        "--budget",
        type=_positive_int,
        help="reading budget (tokens) of the whole-haystack and stored-dump conditions "
        "(default: the run's --context-max-tokens, else 32000)",
    )
    p.add_argument(
        "--all-conditions",
        action="store_true",
        help="ask the conditions for the questions answered right too (default: the misses only)",
    )
    p.add_argument(
        "--concurrency",
        type=_positive_int,
        default=1,
        help="questions whose conditions are asked at once (the reader and judge take that many calls)",
    )
    p.add_argument("--errata", metavar="FILE", help="gold corrections, as given to the run")
    add_model_arguments(p)  # the judge's and reader's endpoints and the model-call cache (--cache, --no-cache)


def run(args) -> int:
    from ..analysis.attribution import attribute_run
    from ..analysis.runs import headline_lines
    from .run import _client

    out = attribute_run(
        args.run,
        judge=_client(args, "judge"),
        reader=_client(args, "reader"),
        system=args.system,
        out=args.out,
        bench_dir=args.bench,
        budget=args.budget,
        reingest=not args.no_reingest,
        errata=args.errata,
        all_conditions=args.all_conditions,
        concurrency=args.concurrency,
    )
    print("\n".join(headline_lines(out)), file=sys.stderr)
    print(out)
    return 0
