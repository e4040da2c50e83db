"""memeval regrade: grade a finished run's answers and memories again, without calling its system."""

from __future__ import annotations

from .run import add_cache_arguments

HELP = "grade a run's stored answers and memories again (new run folder, no system call)"


def add_arguments(p) -> None:
    p.add_argument("run", help="the source run folder")
    p.add_argument("--mode", choices=["dry", "memory", "answer"], required=True)
    p.add_argument("--out", help="new run folder (default: <run>_regrade-<mode>-<grader hash> beside the source)")
    p.add_argument("--bench", help="bench folder (default: the one the source manifest names)")
    p.add_argument("--errata", metavar="FILE", help="gold corrections applied when grading (see memeval run --errata)")
    for role in ("judge", "reader"):
        p.add_argument(f"--{role}-url", help=f"OpenAI-compatible base URL of the {role}")
        p.add_argument(f"--{role}-model", help=f"{role} model name")
        p.add_argument(
            f"--{role}-key-env", default="OPENAI_API_KEY", help=f"environment variable holding the {role}'s API key"
        )
    add_cache_arguments(p)


def run(args) -> int:
    from ..run.regrade import regrade_run
    from .run import _client

    print(
        regrade_run(
            args.run,
            args.mode,
            judge=_client(args, "judge"),
            reader=_client(args, "reader"),
            out=args.out,
            bench_dir=args.bench,
            errata=args.errata,
        )
    )
    return 0
