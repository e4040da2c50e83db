"""``memeval retry RUN``: ask again the questions of a run whose records are errors (inspect's eval-retry).

The run's own configuration (bench, system, tiers, mode, epochs, question set, HTTP settings) is read
from its manifest; new records are appended and supersede the error records (``run.records``).
"""

from __future__ import annotations

from .run import add_error_arguments, add_model_arguments

HELP = "ask again the questions of a run whose records are errors (and any never asked); appends, never rewrites"


def add_arguments(p) -> None:
    p.add_argument("run", metavar="RUN", help="run folder (holding manifest.json and records.jsonl)")
    p.add_argument(
        "--system",
        help="where the system is now (e.g. http://HOST:PORT of a restarted server); default: the run's own",
    )
    p.add_argument("--concurrency", type=int, default=1, help="parallel queries (HTTP systems only)")
    add_model_arguments(p)
    p.add_argument("--prices", help="price table (YAML), as given to the run: records get cost_usd (default: none)")
    add_error_arguments(p, keep=False)
    p.add_argument("--no-progress", action="store_true")


def run(args) -> int:
    from pathlib import Path

    from ..errors import InputError
    from ..run.cost import load_prices
    from ..run.folder import read_manifest
    from ..run.runner import run_system
    from ..run.status import MaxErrors
    from .run import _client, _say, finish

    budget = MaxErrors.parse(args.max_errors)
    m = read_manifest(args.run)
    c = m["config"]
    system = c["system"]
    spec = args.system or system["spec"]
    params = system.get("params") or {}
    bench_root = (c.get("bench") or {}).get("root")
    if not bench_root or not (Path(bench_root) / "bench.yaml").is_file():
        raise InputError(Path(args.run) / "manifest.json", None, "config.bench.root", f"no bench at {bench_root!r}")
    speed = c.get("speed") or {}
    from ..run.records import read_records

    if not any(r.get("error") is not None for r in read_records(args.run)):
        _say("no error records to ask again (questions never asked, if any, are asked)", "retry")
    run_dir = run_system(
        bench_root,
        spec,
        tiers=[t["name"] for t in c["tiers"]],
        mode=c["mode"],
        epochs=int(c.get("epochs") or 1),
        concurrency=args.concurrency,
        out=args.run,
        progress=not args.no_progress,
        judge=_client(args, "judge"),
        reader=_client(args, "reader"),
        target_ms=speed.get("target_ms", 500.0),
        budget_ms=speed.get("budget_ms", 1000.0),
        question_set=c.get("question_set") or "main",
        name=system.get("label"),
        context_max_tokens=c.get("context_max_tokens"),
        prices=load_prices(args.prices) if args.prices else None,
        keep_errors=False,
        max_errors=budget,
        max_connection_failures=args.max_connection_failures,
        messages=lambda line: _say(line, "retry"),
        http_options={
            k: params[p]
            for k, p in (
                ("timeout", "timeout_s"),
                ("max_attempts", "max_attempts"),
                ("api_key_env", "api_key_env"),
                ("max_reply_bytes", "max_reply_bytes"),
                ("images", "images"),
            )
            if p in params
        }
        if spec.startswith(("http://", "https://"))
        else None,
    )
    return finish(run_dir, "retry")
