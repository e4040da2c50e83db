"""memeval loadtest: latency under load, open-loop, against an HTTP memory system.

One client process (the HTTP adapter's event loop) sends the schedule; each rate step reports the
latency from the scheduled send time and the client's own lag, and warns when that lag shows the
client could not keep the schedule."""

from __future__ import annotations

HELP = "open-loop load test of an HTTP memory system: fixed request rate, latency from the scheduled time"


def add_arguments(p) -> None:
    p.add_argument("url", help="base URL of a system speaking the HTTP memory protocol")
    p.add_argument("--bench", required=True, help="bench folder; the tier is ingested first")
    p.add_argument("--tier", required=True)
    p.add_argument("--rate", type=float, nargs="+", required=True, help="requests per second (several: one step each)")
    p.add_argument("--duration", type=float, default=10.0, help="seconds per rate step")
    p.add_argument("--max-in-flight", type=int, default=64)
    p.add_argument(
        "--http-timeout",
        type=float,
        default=30.0,
        help="total deadline of one request attempt: connect + send + receive (s)",
    )
    p.add_argument(
        "--api-key-env",
        default="MEMEVAL_API_KEY",
        help="environment variable whose value is sent as the system's bearer token",
    )
    p.add_argument("--no-ingest", action="store_true", help="the system already holds the tier")
    p.add_argument("--out", metavar="FILE", help="also write one JSON line per rate step here (kept for later)")
    p.add_argument(
        "--max-lag-ms",
        type=float,
        default=50.0,
        help="warn when the client itself sends later than this behind schedule (default 50 ms)",
    )
    p.add_argument("--no-progress", action="store_true")


def run(args) -> int:
    import dataclasses
    import datetime as dt
    import sys

    from tqdm.auto import tqdm

    from ..atomic import write_jsonl
    from ..errors import MemevalError, UsageError
    from ..run.loadtest import open_loop, questions_of
    from ..errors import SystemCallError
    from ..systems.http import HttpSystem, ingest_key
    from ..text.urls import public_url

    if args.max_in_flight < 1 or args.http_timeout <= 0 or any(r <= 0 for r in args.rate) or args.duration <= 0:
        raise UsageError("--rate, --duration, --max-in-flight and --http-timeout must be positive")
    try:
        system = HttpSystem(args.url, pool=args.max_in_flight, timeout=args.http_timeout, api_key_env=args.api_key_env)
    except MemevalError as e:
        raise UsageError(str(e)) from None
    try:
        sessions, questions = questions_of(args.bench, args.tier)
        if not args.no_ingest:
            system.reset()
            from ..bench import load_bench

            bench_hash = load_bench(args.bench).content_hash
            for i, s in enumerate(tqdm(sessions, desc="ingest", unit="session", leave=False, disable=args.no_progress)):
                system.ingest(s, idempotency_key=ingest_key(bench_hash, args.tier, s.session_id, i))
        print(
            f"{'rate':>8} {'achieved':>9} {'errors':>6} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}"
            "   (latency minus round trip, ms, from the scheduled send time)"
        )
        results = []
        for rate in args.rate:
            with tqdm(
                total=max(1, int(rate * args.duration)),
                desc=f"{rate:g}/s",
                unit="req",
                leave=False,
                disable=args.no_progress,
            ) as bar:
                r = open_loop(system, questions, rate, args.duration, args.max_in_flight, on_done=bar.update)
            p = {k: "-" if v is None else f"{v:.2f}" for k, v in r.latency_minus_rtt.items()}  # None: all failed
            print(
                f"{r.rate:>8.1f} {r.achieved_rate:>9.1f} {r.errors:>6} {p['p50']:>8} {p['p90']:>8} "
                f"{p['p99']:>8} {p['max']:>8}   floor {r.network_ms} ms, "
                f"client lag p50 {r.lag['p50']:.2f} / p99 {r.lag['p99']:.2f} / max {r.max_lag_ms:.2f} ms"
            )
            if r.slot_wait["max"] is not None and r.slot_wait["max"] > args.max_lag_ms:
                print(
                    f"note: at {rate:g}/s requests waited up to {r.slot_wait['max']:.0f} ms for one of the "
                    f"--max-in-flight {args.max_in_flight} slots: the system held that many requests (its "
                    "queueing is in the latencies; raise --max-in-flight to keep sending on schedule)",
                    file=sys.stderr,
                )
            if r.max_lag_ms > args.max_lag_ms:
                print(
                    f"warning: at {rate:g}/s the client itself fell {r.max_lag_ms:.0f} ms behind schedule (over "
                    f"--max-lag-ms {args.max_lag_ms:g}): this machine cannot send this rate, so these latencies "
                    "include the load generator's own delay (lower the rate, or run the client on a quieter machine)",
                    file=sys.stderr,
                )
            results.append(
                {
                    "url": public_url(args.url),
                    "bench": str(args.bench),
                    "tier": args.tier,
                    "duration_s": args.duration,
                    "max_in_flight": args.max_in_flight,
                    "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                    "lag_warning": r.max_lag_ms > args.max_lag_ms,
                    **dataclasses.asdict(r),
                }
            )
        if args.out:
            write_jsonl(args.out, results)
            print(f"wrote {len(results)} rate steps to {args.out}")
    except SystemCallError as e:
        raise UsageError(f"{public_url(args.url)}: {e}") from None
    finally:
        system.close()
    return 0
