"""memeval serve: the reference server (any built-in system behind the HTTP protocol)."""

from __future__ import annotations

import sys

HELP = "serve a built-in system over the HTTP memory protocol (reference server; fault injection)"


def add_arguments(p) -> None:
    p.add_argument("system", help="built-in system, e.g. bm25:k=10")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--delay-ms", type=float, default=0.0, help="fixed service delay added to every /query")
    p.add_argument("--error-rate", type=float, default=0.0, help="share of /query answered 500")
    p.add_argument("--drop-rate", type=float, default=0.0, help="share of /query whose connection is dropped")
    p.add_argument("--stall-rate", type=float, default=0.0, help="share of /query that stall")
    p.add_argument("--stall-ms", type=float, default=2000.0)
    p.add_argument("--seed", type=int, default=0, help="seed of the fault schedule")


def run(args) -> int:
    from ..errors import MemevalError
    from ..systems.registry import make_system
    from ..systems.server import Faults, ReferenceServer

    system = make_system(args.system)
    if hasattr(system, "prepare"):
        raise MemevalError(f"{args.system!r} needs the bench question itself and cannot be served over HTTP")
    for name in ("error_rate", "drop_rate", "stall_rate"):
        if not 0 <= getattr(args, name) <= 1:
            raise MemevalError(f"--{name.replace('_', '-')} must be between 0 and 1")
    faults = Faults(args.delay_ms, args.error_rate, args.drop_rate, args.stall_rate, args.stall_ms, args.seed)
    srv = ReferenceServer(system, args.host, args.port, faults)
    print(f"serving {system.name} on {srv.url} (OpenAPI at {srv.url}/openapi.json)", file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv._server.server_close()
    return 0
