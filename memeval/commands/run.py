"""memeval run: one system over a bench's tiers; resumable."""

from __future__ import annotations

HELP = "run a memory system over a bench's tiers and record every question (resumable)"


def add_arguments(p) -> None:
    p.add_argument("--bench", required=True, help="bench folder (with bench.yaml)")
    p.add_argument(
        "--system",
        required=True,
        help="no_memory | oracle | recent:tokens=N | bm25:k=N | context:tokens=N | vector:k=N,model=M | "
        "hybrid:k=N,model=M | mem0:llm_url=URL,llm_model=M,embed_model=E (pip install memeval[mem0]) | "
        "zep:k=N | supermemory:k=N | mem0-platform:k=N (hosted APIs; key from the environment) | "
        "http://HOST:PORT | python:mod:factory",
    )
    p.add_argument("--tiers", nargs="*", help="tier names (default: all, smallest first)")
    p.add_argument("--mode", choices=["dry", "memory", "answer"], default="dry")
    p.add_argument(
        "--question-set",
        default="main",
        help="which questions to ask: the tier's main file, or a named set such as 'probes'",
    )
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=1, help="parallel queries (HTTP systems only)")
    p.add_argument(
        "--out", help="run folder (default: runs/<bench>_<system>_<mode>_<config id> under the project root)"
    )
    p.add_argument(
        "--name",
        help="the system's logical name: names the run folder instead of the spec, and a URL's "
        "port is left out of the config, so a server on another port resumes the run",
    )
    p.add_argument("--target-ms", type=float, default=500.0, help="memory's share of the latency budget")
    p.add_argument("--budget-ms", type=float, default=1000.0, help="conversation fluidity budget (recorded)")
    add_model_arguments(p)
    p.add_argument(
        "--http-images",
        choices=["path", "inline"],
        default="path",
        help="how a turn's image file reaches an HTTP system: its bench path, or its bytes as a data: URL",
    )
    p.add_argument(
        "--http-timeout",
        type=float,
        default=30.0,
        help="total deadline of one HTTP request attempt: connect + send + receive (s)",
    )
    p.add_argument(
        "--max-reply-bytes",
        type=int,
        default=8 * 1024 * 1024,
        help="largest HTTP reply accepted; a larger /query reply is an error record (default 8 MiB)",
    )
    p.add_argument(
        "--no-verify", action="store_true", help="skip checking the bench files against the content_hash in bench.yaml"
    )
    p.add_argument("--http-attempts", type=int, default=4, help="attempts per request (429/5xx/drops retried)")
    p.add_argument(
        "--api-key-env",
        default="MEMEVAL_API_KEY",
        help="environment variable whose value is sent as the HTTP system's bearer token",
    )
    p.add_argument(
        "--context-max-tokens",
        type=_positive_int,
        help="answer mode: the most memory tokens (approx-v1) the reader reads; longer contexts are cut and "
        "the cut recorded (compare systems at one reading budget)",
    )
    p.add_argument(
        "--prices",
        help="price table (YAML: {model: {input: USD, output: USD}} per million tokens): records get cost_usd",
    )
    add_error_arguments(p)
    p.add_argument(
        "--errata",
        metavar="FILE",
        help="gold corrections (YAML, docs: memeval.scoring.errata) applied when grading; records keep "
        "score_raw (the published gold) beside score, the manifest the file's sha256",
    )
    p.add_argument(
        "--searchable-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="a system that indexes asynchronously (hosted APIs): the longest wait per haystack for its newest "
        "session to be searchable after ingest; past it the haystack's questions are error records",
    )
    p.add_argument("--no-progress", action="store_true")


def add_limits(p, role: str) -> None:
    """``--<role>-max-tokens`` and ``--<role>-timeout``: the bounds of each call of that role."""
    from ..llm import ROLE_LIMITS

    d = ROLE_LIMITS[role]
    p.add_argument(
        f"--{role}-max-tokens",
        type=_positive_int,
        default=d.max_tokens,
        help=f"most tokens the {role} may generate a call (default {d.max_tokens})",
    )
    p.add_argument(
        f"--{role}-timeout",
        type=float,
        default=d.timeout,
        help=f"seconds one {role} call may take before it is retried (default {d.timeout:g})",
    )


def limits(args, role: str) -> dict:
    """The ``ChatClient`` keyword arguments of a role's bounds, from ``add_limits``' options."""
    return {
        "role": role,
        "max_tokens": getattr(args, f"{role.replace('-', '_')}_max_tokens", None),
        "timeout": getattr(args, f"{role.replace('-', '_')}_timeout", None),
    }


def add_model_arguments(p) -> None:
    """The judge's and reader's endpoints (``run`` and ``retry``)."""
    for role in ("judge", "reader"):
        p.add_argument(f"--{role}-url", help=f"OpenAI-compatible base URL of the {role}")
        p.add_argument(f"--{role}-model", help=f"{role} model name")
        p.add_argument(
            f"--{role}-key-env", default="OPENAI_API_KEY", help=f"environment variable holding the {role}'s API key"
        )
        add_limits(p, role)
    p.add_argument(
        "--reader-images",
        action="store_true",
        help="the reader model accepts images: memories' images are sent to it as image content parts",
    )
    add_cache_arguments(p)


def add_cache_arguments(p) -> None:
    """``--cache DIR`` and ``--no-cache``: the model-call cache of the reader's and judge's calls."""
    p.add_argument(
        "--cache",
        metavar="DIR",
        help="model-call cache folder: a request already answered is not sent again (default: $MEMEVAL_CACHE, "
        "else .memeval/cache under the project root)",
    )
    p.add_argument("--no-cache", action="store_true", help="send every model call (no model-call cache)")


def model_cache(args):
    """The command's one model-call cache (``--cache``/``--no-cache``; ``callcache.resolve_cache``), or None."""
    if "_model_cache" not in vars(args):
        from ..callcache import resolve_cache

        args._model_cache = resolve_cache(getattr(args, "cache", None), getattr(args, "no_cache", False))
    return args._model_cache


def add_error_arguments(p, keep: bool = True) -> None:
    """The options of what a run does about errors (``run``; ``retry`` without ``--keep-errors``)."""
    p.add_argument(
        "--max-errors",
        default="0",
        help="error records tolerated before the run is 'failed' (exit 1): a count (5) or a fraction of "
        "the questions (0.1 or 10%%); default 0",
    )
    if keep:
        p.add_argument(
            "--keep-errors",
            action="store_true",
            help="on a rerun, keep earlier error records instead of asking those questions again",
        )
    p.add_argument(
        "--max-connection-failures",
        type=_positive_int,
        default=10,
        help="stop the run after this many consecutive connection failures of a served system (default 10; "
        "the first failure its health check confirms stops it at once)",
    )


def _positive_int(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return n


def _client(args, role):
    url, model = getattr(args, f"{role}_url"), getattr(args, f"{role}_model")
    if not url or not model:
        return None
    from ..llm import ChatClient
    from ..scoring.judge import Judge, Reader

    client = ChatClient(
        url, model, api_key_env=getattr(args, f"{role}_key_env"), cache=model_cache(args), **limits(args, role)
    )
    return Judge(client) if role == "judge" else Reader(client, images=getattr(args, "reader_images", False))


def run(args) -> int:
    from ..run.cost import load_prices
    from ..run.runner import RunConfig, run_system
    from ..workspace import anchored  # no polars before the run: its threads must not see Ctrl-C first

    from ..run.status import MaxErrors

    budget = MaxErrors.parse(args.max_errors)  # a bad value stops here, before any question
    prices = load_prices(args.prices) if args.prices else None  # a bad table stops here, before any question
    config = RunConfig(
        bench_dir=args.bench,
        system=args.system,
        tiers=args.tiers,
        mode=args.mode,
        epochs=args.epochs,
        concurrency=args.concurrency,
        out=args.out,
        progress=not args.no_progress,
        judge=_client(args, "judge"),
        reader=_client(args, "reader"),
        target_ms=args.target_ms,
        budget_ms=args.budget_ms,
        question_set=args.question_set,
        verify=not args.no_verify,
        name=args.name,
        runs_root=str(anchored("runs")),
        context_max_tokens=args.context_max_tokens,
        prices=prices,
        keep_errors=args.keep_errors,
        max_errors=budget,
        max_connection_failures=args.max_connection_failures,
        messages=_say,
        errata=args.errata,
        searchable_timeout=args.searchable_timeout,
        http_options={
            "timeout": args.http_timeout,
            "max_attempts": args.http_attempts,
            "api_key_env": args.api_key_env,
            "max_reply_bytes": args.max_reply_bytes,
            "images": args.http_images,
        }
        if args.system.startswith("http")
        else None,
    )
    run_dir = run_system(config)
    return finish(run_dir)


def _say(line: str, command: str = "run") -> None:
    import sys

    print(f"memeval {command}: {line}", file=sys.stderr, flush=True)


def finish(run_dir, command: str = "run") -> int:
    """After a run: the validity gate, the headline (stderr), the folder (stdout), and the exit code:
    1 with the error count and the three most common reasons when the run is ``failed``."""
    import sys

    from ..analysis.runs import headline_lines
    from ..run.folder import read_manifest

    _gate(run_dir)
    print("\n".join(headline_lines(run_dir)), file=sys.stderr)  # stdout stays the folder alone (for scripts)
    print(run_dir, flush=True)
    m = read_manifest(run_dir)
    if m.get("status") != "failed":
        return 0
    from ..run.records import read_records
    from ..run.status import errors_by_reason, reasons_line

    reasons = errors_by_reason(read_records(run_dir))
    why = "; ".join(m.get("status_reasons") or ["failed"])
    top = f": {reasons_line(reasons)}" if reasons else ""
    print(f"memeval {command}: error: run failed: {why}{top}", file=sys.stderr)
    return 1


def _gate(run_dir) -> None:
    """Where dry answer scores are not valid on this bench: say so in one line, then the retrieval figures."""
    import sys

    from ..run.records import read_records
    from ..run.folder import read_manifest
    from ..audit.validity import gate_line

    m = read_manifest(run_dir)
    line = gate_line(m["config"]["bench"]["name"], m.get("dry_validity"))
    if line is None:
        return
    recs = [r for r in read_records(run_dir) if r.get("retrieval_metrics")]
    figs = (
        ", ".join(
            f"{k} {sum(r['retrieval_metrics'][k] for r in recs) / len(recs):.3f}"
            for k in ("turn_recall_any@5", "turn_recall_all@10", "session_recall_any@5")
        )
        if recs
        else "none"
    )
    print(line, file=sys.stderr)
    print(f"evidence retrieval over {len(recs)} questions with evidence: {figs}", file=sys.stderr)
