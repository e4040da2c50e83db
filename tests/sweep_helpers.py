"""Shared by the sweep tests: tiny generated benches, SWEEP.yaml writing, record comparison."""

import json
from pathlib import Path

import yaml

from memeval.bench.lifelog import generate

#: Fields that differ between two runs of the same questions by nature (timing, the folder's name).
VOLATILE = ("run_id", "started_at", "latency_ms", "network_ms", "latency_minus_rtt_ms", "speed_points")


def tiny_benches(root: Path, seeds=(1, 2)) -> dict[int, Path]:
    out = {}
    for s in seeds:
        d = root / f"lifelog-tiny-s{s}"
        if not (d / "bench.yaml").is_file():
            generate("tiny", s, d)
        out[s] = d
    return out


def write_spec(path: Path, **fields) -> Path:
    path.write_text(yaml.safe_dump(fields))
    return path


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(run_dir) / "records.jsonl").read_text().splitlines() if line.strip()]


def keyed(recs: list[dict]) -> dict[tuple, dict]:
    """(system, tier, qid, epoch) -> the record without its volatile fields; a duplicate key fails."""
    out: dict[tuple, dict] = {}
    for r in recs:
        key = (r["system"], r["tier"], r["qid"], r["epoch"])
        assert key not in out, f"duplicate record {key}"
        out[key] = {k: v for k, v in r.items() if k not in VOLATILE}
    return out


def sweep_records(sweep_dir: Path, bench_label: str) -> dict[tuple, dict]:
    """Every record of the sweep's shards on one bench, keyed as :func:`keyed`."""
    man = json.loads((sweep_dir / "sweep.json").read_text())
    recs = [r for row in man["shards"] if row["bench"] == bench_label for r in records(sweep_dir / row["run_dir"])]
    return keyed(recs)
