"""Sweeps: systems × benches (or presets × seeds) × tiers × epochs × modes, one shard per
(system, bench, tier, mode) run as a task on dask.distributed; see ``memeval sweep --help``."""

from .execute import SweepResult, default_sweep_dir, run_shard, run_sweep
from .plan import SWEEP, BenchRef, Shard, is_sweep, plan_shards, read_sweep, resolve_benches, write_sweep
from .spec import ModelRef, SweepSpec, check_spec, load_spec

__all__ = [
    "SweepSpec",
    "ModelRef",
    "load_spec",
    "check_spec",
    "Shard",
    "BenchRef",
    "resolve_benches",
    "plan_shards",
    "write_sweep",
    "read_sweep",
    "is_sweep",
    "SWEEP",
    "run_shard",
    "run_sweep",
    "SweepResult",
    "default_sweep_dir",
]
