"""Running systems over benches: the runner and the run folder (manifest + records)."""

from .records import RECORD_FIELDS, Record, read_records
from .folder import read_manifest
from .regrade import regrade_run
from .runner import run_system

__all__ = ["run_system", "regrade_run", "read_records", "read_manifest", "RECORD_FIELDS", "Record"]
