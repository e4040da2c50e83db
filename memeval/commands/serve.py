"""memeval serve: the reference server (any built-in system behind the HTTP protocol)."""

from __future__ import annotations

import sys

HELP = "serve a built-in system over the HTTP memory protocol (reference server; fault injection)"

EPILOG = """limits: a body above --max-body-bytes is refused with 413 without being read; a Content-Length that
is not a non-negative integer gets 400 and a chunked body 411 (the connection is closed); the request
line and headers must arrive within --header-timeout seconds in total and the body within
--body-timeout; a keep-alive connection idle for --idle-timeout is closed; the listen backlog is
--backlog. A repeated Idempotency-Key on POST /sessions is a no-op returning the first reply (keys are
forgotten on POST /reset). Haystacks are fenced: POST /reset returns {"generation": G} and applies
its own Idempotency-Key once; a /sessions or /query naming an older generation (Memory-Generation
header) is refused with 409 and never applied; GET /stats?generation=G gives the sessions stored in G
and their digest, GET /stats the counts too (sessions ingested and repeated, faults). --no-fencing
serves the protocol as it was before generations (204 on reset; a control for fault tests).
With --token-env NAME every route but /health and /openapi.json needs 'Authorization: Bearer
$NAME'. The OpenAPI document is at /openapi.json."""


def add_arguments(p) -> None:
    import argparse

    from ..systems.server import ROUTES, Limits

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    d = Limits()
    p.add_argument("system", help="built-in system, e.g. bm25:k=10")
    p.add_argument(
        "--name",
        help="the name GET /health reports, which names the runs made against this server "
        "(default: the system's name + '-http', e.g. bm25-http)",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument(
        "--token-env",
        metavar="NAME",
        help="environment variable holding a bearer token every client must send (default: no auth)",
    )
    p.add_argument(
        "--max-body-bytes",
        type=int,
        default=d.max_body_bytes,
        help=f"largest request body accepted (default {d.max_body_bytes}; 413 above)",
    )
    p.add_argument(
        "--header-timeout",
        type=float,
        default=d.header_timeout_s,
        help=f"total seconds for the request line and headers (default {d.header_timeout_s})",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=d.body_timeout_s,
        help=f"total seconds for the request body (default {d.body_timeout_s})",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=d.idle_timeout_s,
        help=f"seconds a keep-alive connection may sit idle (default {d.idle_timeout_s})",
    )
    p.add_argument("--backlog", type=int, default=d.backlog, help=f"listen backlog (default {d.backlog})")
    p.add_argument("--delay-ms", type=float, default=0.0, help="fixed service delay added to every /query")
    p.add_argument("--error-rate", type=float, default=0.0, help="share of requests answered 500")
    p.add_argument("--drop-rate", type=float, default=0.0, help="share of requests dropped before the work")
    p.add_argument(
        "--drop-after-rate",
        type=float,
        default=0.0,
        help="share of requests whose reply is dropped after the work is done",
    )
    p.add_argument("--stall-rate", type=float, default=0.0, help="share of requests that stall")
    p.add_argument("--stall-ms", type=float, default=2000.0)
    p.add_argument(
        "--fault-routes",
        nargs="+",
        choices=ROUTES,
        default=["query"],
        help="routes the fault rates apply to (default: query)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the fault schedule")
    p.add_argument(
        "--no-fencing",
        action="store_true",
        help="no generations: 204 on /reset, Memory-Generation ignored (the protocol before fencing; a control)",
    )


def run(args) -> int:
    import os

    from ..errors import MemevalError
    from ..systems.base import declared
    from ..systems.registry import make_system
    from ..systems.server import Faults, Limits, ReferenceServer

    from ..systems.http import valid_name

    if args.name is not None and not valid_name(args.name):
        raise MemevalError(f"--name {args.name!r}: 1-64 characters of A-Z a-z 0-9 . _ + @ -")
    system = make_system(args.system)
    if declared(system).prepare is not None:
        raise MemevalError(f"{args.system!r} needs the bench question itself and cannot be served over HTTP")
    for name in ("error_rate", "drop_rate", "stall_rate", "drop_after_rate"):
        if not 0 <= getattr(args, name) <= 1:
            raise MemevalError(f"--{name.replace('_', '-')} must be between 0 and 1")
    for name in ("max_body_bytes", "header_timeout", "body_timeout", "idle_timeout", "backlog"):
        if getattr(args, name) <= 0:
            raise MemevalError(f"--{name.replace('_', '-')} must be positive")
    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            raise MemevalError(f"--token-env {args.token_env}: that environment variable is unset or empty")
    faults = Faults(
        args.delay_ms,
        args.error_rate,
        args.drop_rate,
        args.stall_rate,
        args.stall_ms,
        args.seed,
        args.drop_after_rate,
        tuple(args.fault_routes),
    )
    limits = Limits(args.max_body_bytes, args.header_timeout, args.body_timeout, args.idle_timeout, args.backlog)
    try:
        srv = ReferenceServer(
            system, args.host, args.port, faults, limits, token, fencing=not args.no_fencing, name=args.name
        )
    except OSError as e:
        raise MemevalError(f"cannot listen on {args.host}:{args.port} ({e.strerror or e})") from None
    auth = ("bearer token required" if token else "no auth") + ("; unfenced" if args.no_fencing else "")
    print(
        f"serving {srv.state.info['name']} on {srv.url} ({auth}; OpenAPI at {srv.url}/openapi.json)",
        file=sys.stderr,
        flush=True,
    )
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.close()
    return 0
