"""Running systems over benches: the runner and the run folder (manifest + records)."""

from .records import RECORD_FIELDS, read_manifest, read_records
from .runner import run_system

__all__ = ["run_system", "read_records", "read_manifest", "RECORD_FIELDS"]
