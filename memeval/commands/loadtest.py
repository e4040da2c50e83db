"""memeval loadtest: latency under load, open-loop, against an HTTP memory system."""

from __future__ import annotations

HELP = "open-loop load test of an HTTP memory system: fixed request rate, latency from the scheduled time"


def add_arguments(p) -> None:
    p.add_argument("url", help="base URL of a system speaking the HTTP memory protocol")
    p.add_argument("--bench", required=True, help="bench folder; the tier is ingested first")
    p.add_argument("--tier", required=True)
    p.add_argument("--rate", type=float, nargs="+", required=True, help="requests per second (several: one step each)")
    p.add_argument("--duration", type=float, default=10.0, help="seconds per rate step")
    p.add_argument("--max-in-flight", type=int, default=64)
    p.add_argument("--no-ingest", action="store_true", help="the system already holds the tier")


def run(args) -> int:
    from ..run.loadtest import open_loop, questions_of
    from ..systems.http import HttpSystem

    sessions, questions = questions_of(args.bench, args.tier)
    system = HttpSystem(args.url, pool=args.max_in_flight)
    try:
        if not args.no_ingest:
            system.reset()
            for s in sessions:
                system.ingest(s)
        print(f"{'rate':>8} {'achieved':>9} {'errors':>6} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}"
              "   (latency minus round trip, ms, from the scheduled send time)")
        for rate in args.rate:
            r = open_loop(system, questions, rate, args.duration, args.max_in_flight)
            p = r.latency_minus_rtt
            print(f"{r.rate:>8.1f} {r.achieved_rate:>9.1f} {r.errors:>6} {p['p50']:>8.2f} {p['p90']:>8.2f} "
                  f"{p['p99']:>8.2f} {p['max']:>8.2f}   floor {r.network_ms} ms, client lag max {r.max_lag_ms} ms")
    finally:
        system.close()
    return 0
