"""memeval sweep on a 2-worker LocalCluster (loopback only): its records equal the same runs made
one at a time with ``memeval run``; a shard a crash left half-written resumes with no duplicates."""

import json
import shutil

import pytest

from memeval.cli import main
from memeval.workbench import load_runs, run_folders
from sweep_helpers import keyed, records, sweep_records, tiny_benches, write_spec

SYSTEMS = ["no_memory", "bm25", "oracle"]


# one xdist worker runs this module: the sweep fixture (a Dask sweep and its reference runs), built by a module fixture, is built once
pytestmark = pytest.mark.xdist_group("sweep")


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Two tiny benches; the sweep (3 systems x 2 seeds x 4 tiers on 2 workers) and the reference
    ``memeval run`` of each (bench, system) over all tiers, in sequence."""
    root = tmp_path_factory.mktemp("sweep")
    benches = tiny_benches(root / "data")
    spec = write_spec(
        root / "SWEEP.yaml", name="t", systems=SYSTEMS, presets=["tiny"], seeds=[1, 2], data_root=str(root / "data")
    )
    rc = main(
        [
            "sweep",
            str(spec),
            "--out",
            str(root / "sw"),
            "--workers",
            "2",
            "--dashboard-address",
            "none",
            "--no-progress",
        ]
    )
    assert rc == 0
    ref = {}
    for seed, b in benches.items():
        for s in SYSTEMS:
            out = root / "ref" / f"{seed}-{s}"
            assert main(["run", "--bench", str(b), "--system", s, "--out", str(out), "--no-progress"]) == 0
            ref[(seed, s)] = out
    return root, benches, ref


@pytest.fixture(scope="module")
def scheduler():
    """One in-process Dask cluster (1 worker thread, loopback TCP) for the tests whose subject is not the cluster
    a sweep starts for itself (``swept`` and the dashboard test start theirs): its scheduler's address.
    A sweep given ``--scheduler`` leaves the cluster up, so the tests can share it."""
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


def test_sweep_records_equal_sequential_runs(swept):
    root, benches, ref = swept
    sw = root / "sw"
    man = json.loads((sw / "sweep.json").read_text())
    assert len(man["shards"]) == 3 * 2 * 4
    assert {r["status"] for r in man["shards"]} == {"complete"} and man["status"] == "complete"
    assert {(r["seed"], r["system"], r["tier"]) for r in man["shards"]} == {
        (seed, s, t) for seed in (1, 2) for s in SYSTEMS for t in ("core", "small", "medium", "full")
    }
    for seed in benches:
        expected = {}
        for s in SYSTEMS:
            expected.update(keyed(records(ref[(seed, s)])))
        got = sweep_records(sw, f"lifelog-tiny-s{seed}")
        assert len(got) == len(expected) > 0
        assert got == expected
    # each shard is an ordinary run folder: one tier, the shard's system, complete
    shard = sw / man["shards"][0]["run_dir"]
    m = json.loads((shard / "manifest.json").read_text())
    assert m["status"] == "complete" and [t["name"] for t in m["config"]["tiers"]] == [man["shards"][0]["tier"]]


def test_load_runs_reads_a_sweep_folder(swept):
    root, benches, ref = swept
    df = load_runs(root / "sw")
    assert df.height == sum(len(records(d)) for d in ref.values())
    assert set(df["seed"].unique()) == {1, 2} and set(df["system"].unique()) == set(SYSTEMS)
    # tiers in their bench's order, not each shard's own (one tier per shard)
    assert dict(df.select("tier", "tier_index").unique().iter_rows()) == {"core": 0, "small": 1, "medium": 2, "full": 3}
    # the core set spans the shards: the same as in the reference runs of one system
    one = load_runs(ref[(1, "bm25")])
    core_ref = set(one.filter("in_all_tiers")["qid"])
    core_sweep = set(df.filter((df["seed"] == 1) & (df["system"] == "bm25") & df["in_all_tiers"])["qid"])
    assert core_sweep == core_ref and 0 < len(core_ref) < one["qid"].n_unique()
    assert len(run_folders(root / "sw")) == 24


def test_rerun_after_crashed_shards_completes_without_duplicates(swept, scheduler, tmp_path):
    root, benches, ref = swept
    sw = tmp_path / "sw"
    shutil.copytree(root / "sw", sw)
    man = json.loads((sw / "sweep.json").read_text())
    # a shard killed mid-write: some records, half a line, its manifest still "started"
    half = sw / next(r["run_dir"] for r in man["shards"] if r["system"] == "bm25" and r["tier"] == "full")
    lines = (half / "records.jsonl").read_text().splitlines(keepends=True)
    (half / "records.jsonl").write_text("".join(lines[:20]) + lines[20][: len(lines[20]) // 2])
    hm = json.loads((half / "manifest.json").read_text())
    hm["status"] = "started"
    (half / "manifest.json").write_text(json.dumps(hm))
    # a shard that never started, and one with a manifest but no records yet
    shutil.rmtree(sw / next(r["run_dir"] for r in man["shards"] if r["system"] == "oracle" and r["seed"] == 2))
    (sw / next(r["run_dir"] for r in man["shards"] if r["system"] == "no_memory") / "records.jsonl").write_text("")
    spec = root / "SWEEP.yaml"
    rc = main(["sweep", str(spec), "--out", str(sw), "--scheduler", scheduler, "--no-progress"])
    assert rc == 0
    assert json.loads((half / "manifest.json").read_text())["status"] == "complete"
    for seed in benches:
        expected = {}
        for s in SYSTEMS:
            expected.update(keyed(records(ref[(seed, s)])))
        assert sweep_records(sw, f"lifelog-tiny-s{seed}") == expected  # keyed() fails on a duplicate


def test_sweep_on_an_existing_scheduler(swept, scheduler, tmp_path, capsys):
    """--scheduler tcp://HOST:PORT: the shards run on that cluster, which stays up afterwards."""
    from dask.distributed import Client

    root, benches, ref = swept
    spec = write_spec(tmp_path / "S.yaml", systems=["bm25"], benches=[str(benches[2])], tiers=["core", "full"])
    addr = scheduler
    assert addr.startswith("tcp://127.0.0.1:")
    rc = main(["sweep", str(spec), "--out", str(tmp_path / "sw"), "--scheduler", addr, "--no-progress"])
    assert rc == 0
    with Client(addr) as c:  # still there
        assert len(c.scheduler_info()["workers"]) == 1
    want = {k: v for k, v in keyed(records(ref[(2, "bm25")])).items() if k[1] in ("core", "full")}
    assert sweep_records(tmp_path / "sw", "lifelog-tiny-s2") == want
    assert capsys.readouterr().out.strip() == str(tmp_path / "sw")


def test_progress_and_dashboard_link_are_shown(swept, tmp_path, capsys):
    """The sweep's first line names the dashboard, which answers while the sweep runs; a bar counts shards."""
    import httpx

    from memeval.run.sweep import load_spec, run_sweep

    root, benches, ref = swept
    spec = load_spec(write_spec(tmp_path / "S.yaml", systems=["no_memory"], benches=[str(benches[1])], tiers=["core"]))
    seen = {}

    def log(line):
        link = line.rsplit(" ", 1)[1]
        seen["line"], seen["status"] = line, httpx.get(link, timeout=30).status_code

    result = run_sweep(spec, tmp_path / "sw", n_workers=1, dashboard_address="127.0.0.1:0", progress=True, log=log)
    assert result.complete and result.dashboard.startswith("http://127.0.0.1:")
    assert seen["line"] == f"sweep S: 1 shards on 1 Dask workers; dashboard {result.dashboard}"
    assert seen["status"] == 200
    err = capsys.readouterr().err
    assert "sweep: 100%" in err and "1/1" in err  # the tqdm bar over shards


def test_load_runs_of_a_project_folder_holds_the_sweep_and_the_runs_beside_it(swept):
    root, benches, ref = swept  # root: data/ (benches, no runs), sw/ (the sweep), ref/ (6 plain runs)
    df = load_runs(root)
    want = len(load_runs(root / "sw")) + sum(len(records(d)) for d in ref.values())
    assert df.height == want and set(df["run_id"].unique()) >= {d.name for d in ref.values()}
    assert df["seed"].null_count() == sum(len(records(d)) for d in ref.values())  # sweep columns kept
    assert len(run_folders(root)) == 24 + len(ref)
