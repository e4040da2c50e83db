"""``memeval leniency build BENCH --out FILE`` and ``memeval leniency grade FILE --judge-url U --judge-model M``.

``build`` writes the leniency probe set of a bench (trap answers a strict judge must reject, each
labelled with its trap; see ``memeval.scoring.leniency``). ``grade`` has each judge (repeat
``--judge-url``/``--judge-model`` in pairs) grade every probe and prints its acceptance rate (any
credit given to a trap answer) per trap and per axis, with n.
"""

from __future__ import annotations

from .run import add_cache_arguments

HELP = "leniency probe: build trap answers from a bench; report each judge's acceptance of them per trap and axis"


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    b = sub.add_parser("build", help="write the probe set of a bench")
    b.add_argument("bench", metavar="BENCH", help="bench folder (with bench.yaml)")
    b.add_argument("--out", required=True, help="probe file to write (JSONL)")
    b.add_argument("--tier", help="tier whose questions to use (default: the first)")
    b.add_argument("--max-per-trap", type=int, default=None, metavar="N", help="keep the first N probes of each trap")
    g = sub.add_parser("grade", help="grade a probe file with one or more judges")
    g.add_argument("probes", metavar="FILE", help="probe file from 'memeval leniency build'")
    g.add_argument("--judge-url", action="append", required=True, help="OpenAI-compatible base URL (repeatable)")
    g.add_argument("--judge-model", action="append", required=True, help="model name, one per --judge-url")
    g.add_argument("--judge-key-env", default="OPENAI_API_KEY", help="environment variable holding the judges' API key")
    g.add_argument("--concurrency", type=int, default=4, help="parallel judge calls (default 4)")
    g.add_argument("--out", help="also write every verdict to this JSONL file")
    add_cache_arguments(g)


def run(args) -> int:
    return _build(args) if args.action == "build" else _grade(args)


def _build(args) -> int:
    from collections import Counter

    from ..scoring.leniency import build_probes, write_probes

    probes = build_probes(args.bench, args.tier, args.max_per_trap)
    if not probes:
        from ..errors import MemevalError

        raise MemevalError(
            f"{args.bench}: no trap answer can be built from this tier (no STALE/UPDATE old values, "
            "CONTRADICT sides, FALSE_MEMORY claims or one-value questions with a sibling); nothing written"
        )
    n = write_probes(args.out, probes)
    per = Counter(p.trap for p in probes)
    print(f"{n} probes ({', '.join(f'{t} {k}' for t, k in sorted(per.items()))}) -> {args.out}")
    return 0


def _grade(args) -> int:
    import polars as pl
    from ._tables import console_tables  # polars on use: start-up time of every command

    from ..analysis.judges import leniency_table
    from ..atomic import write_jsonl
    from ..errors import MemevalError
    from ..llm import ChatClient
    from ..scoring.judge import Judge
    from ..scoring.leniency import grade_probes, read_probes
    from .run import model_cache

    if len(args.judge_url) != len(args.judge_model):
        raise MemevalError(
            f"{len(args.judge_url)} --judge-url but {len(args.judge_model)} --judge-model: give them in pairs"
        )
    probes = read_probes(args.probes)
    rows = []
    for url, model in zip(args.judge_url, args.judge_model):
        judge = Judge(ChatClient(url, model, api_key_env=args.judge_key_env, role="judge", cache=model_cache(args)))
        rows += grade_probes(probes, judge, f"{model} @ {judge.client.base_url}", args.concurrency)
    if args.out:
        write_jsonl(args.out, rows)
    df = pl.DataFrame(rows, schema_overrides={"score": pl.Float64})
    with console_tables(120, fmt_str_lengths=60):
        print(
            f"{len(probes)} trap answers from {args.probes}; acceptance = share of graded traps given any credit "
            "(correct or partial; a strict judge scores 0); ungraded counted apart\n"
        )
        print(leniency_table(df, ["judge"]))
        print("\nPer trap")
        print(leniency_table(df, ["judge", "trap"]))
        print("\nPer axis")
        print(leniency_table(df, ["judge", "axis"]))
    return 0
