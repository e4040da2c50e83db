"""memeval sweep: systems × benches × seeds × tiers × epochs × modes, one shard per task on Dask."""

from __future__ import annotations

HELP = "run a sweep (SWEEP.yaml) of systems × benches × seeds × tiers × modes as shards on dask.distributed"


def add_arguments(p) -> None:
    p.add_argument("spec", metavar="SWEEP.yaml", help="the sweep file (see docs/sweeps.md)")
    p.add_argument(
        "--scheduler",
        help="address of an existing Dask scheduler (tcp://HOST:PORT, e.g. from dask-jobqueue or "
        "dask-kubernetes); default: a LocalCluster on this machine",
    )
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    p.add_argument("--threads-per-worker", type=int, default=1)
    p.add_argument(
        "--dashboard-address",
        default=":8787",
        help="LocalCluster dashboard address (default :8787, another port if taken; 'none' for no dashboard)",
    )
    p.add_argument("--out", help="sweep folder (default: runs/sweep_<name> under the project root)")
    p.add_argument("--no-progress", action="store_true")


def run(args) -> int:
    import sys

    from ..errors import MemevalError
    from ..run.sweep import load_spec, run_sweep
    from ..workspace import anchored

    if args.workers < 1 or args.threads_per_worker < 1:
        raise MemevalError("--workers and --threads-per-worker must be at least 1")
    spec = load_spec(args.spec)
    dash = None if str(args.dashboard_address).lower() == "none" else args.dashboard_address
    result = run_sweep(
        spec,
        anchored(args.out) if args.out else None,
        scheduler=args.scheduler,
        n_workers=args.workers,
        threads_per_worker=args.threads_per_worker,
        dashboard_address=dash,
        progress=not args.no_progress,
        runs_root=anchored("runs"),
    )
    bad = {k: v for k, v in result.outcome.items() if v.get("status") != "complete"}
    for sid, o in bad.items():
        print(f"shard {sid}: {o.get('status')}: {o.get('error', '')}".rstrip(": "), file=sys.stderr)
    n = len(result.outcome)
    print(
        f"sweep {spec.name}: {n - len(bad)} of {n} shards complete"
        + (" (rerun the same command to resume the rest)" if bad else ""),
        file=sys.stderr,
    )
    print(result.sweep_dir)
    return 1 if bad else 0
