"""Property-based: valid files of every input format, mutated (byte flips, truncation, binary garbage,
deep nesting, 5,000-digit integers, wrong types, missing fields), are either read or refused with one
:class:`MemevalError` line -- never a traceback, and a refused import leaves nothing behind.

The readers run in-process (2,800 mutated inputs); a handful of cases run the CLI (one of them as a
subprocess, the rest through ``memeval.cli.main``) and check exit 2 with a single line on stderr.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incli import memeval_cli
from memeval.errors import MemevalError

DEEP = "[" * 5000 + "]" * 5000  # deeper than any parser's recursion limit
NESTED = "[" * 80 + "1" + "]" * 80  # parses, but deeper than any data format needs
BIG = "7" * 5000  # over Python's 4,300-digit integer conversion limit
MARKERS = {"@@DEEP@@": DEEP, "@@NESTED@@": NESTED, "@@BIG@@": BIG}
VALUES = [
    "lots",
    "",
    -1,
    0,
    2**40,
    1.5,
    True,
    None,
    [],
    {},
    [1, "x"],
    {"a": 1},
    "../../../etc/passwd",
    "/etc/passwd",
    "\ud800",
    "2023/13/45 (Xyz) 99:99",
    *MARKERS,
]
SPLICES = [DEEP, NESTED, BIG, "\udcff", "\ufeff", "\x00", '"', "}", "]", "\n", "\r\n{}\n"]

POS = st.integers(0, 10**6)
MUTATION = st.one_of(
    st.tuples(st.just("flip"), POS, st.integers(1, 255)),
    st.tuples(st.just("truncate"), POS),
    st.tuples(st.just("insert"), POS, st.binary(min_size=1, max_size=12)),
    st.tuples(st.just("garbage"), st.binary(max_size=300)),
    st.tuples(st.just("splice"), POS, st.sampled_from(range(len(SPLICES)))),
    st.tuples(st.just("value"), POS, POS, st.sampled_from(range(len(VALUES)))),
    st.tuples(st.just("value"), POS, POS, st.sampled_from(range(len(VALUES)))),  # twice as likely
    st.tuples(st.just("delete"), POS, POS),
)


# --- mutations -----------------------------------------------------------------------------------


def _slots(obj, out=None):
    """(container, key) for every value inside ``obj``."""
    out = [] if out is None else out
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        out.append((obj, k))
        _slots(v, out)
    return out


# libyaml's loader and dumper where it is installed (the pure-Python ones cost most of a booksuite case's time);
# its dumper refuses lone surrogates, which the pure-Python one writes as escapes: that case falls back to it
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _yaml_dump(obj) -> str:
    try:
        return yaml.dump(obj, Dumper=_DUMPER, sort_keys=False)
    except UnicodeEncodeError:
        return yaml.safe_dump(obj, sort_keys=False)


def _dump(obj, kind: str) -> str:
    text = _yaml_dump(obj) if kind == "yaml" else json.dumps(obj)
    for m, sub in MARKERS.items():
        for quoted in (json.dumps(m), f"'{m}'", m):
            text = text.replace(quoted, sub)
    return text


@functools.lru_cache(maxsize=16)
def _yaml_pickle(data: bytes) -> bytes:
    return pickle.dumps(yaml.load(data.decode("utf-8"), Loader=_LOADER))


def _yaml_tree(data: bytes):
    """A fresh parse of ``data``: the base files are parsed once, each mutation gets its own copy (unpickled)."""
    return pickle.loads(_yaml_pickle(data))


def _structural(data: bytes, kind: str, m) -> bytes:
    op, a, b = m[0], m[1], m[2]
    text = data.decode("utf-8")
    if kind == "jsonl":
        lines = text.splitlines()
        i = a % len(lines)
        lines[i] = _structural(lines[i].encode(), "json", (op, b, b, *m[3:])).decode("utf-8", "surrogatepass")
        return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    obj = _yaml_tree(data) if kind == "yaml" else json.loads(text)
    slots = _slots(obj)
    if not slots:
        return data
    parent, key = slots[b % len(slots)]
    if op == "delete":
        del parent[key]
    else:
        parent[key] = VALUES[m[3]]
    try:
        return _dump(obj, kind).encode("utf-8", "surrogatepass")
    except yaml.YAMLError:
        return data


def mutate(data: bytes, kind: str, m) -> bytes:
    op = m[0]
    n = max(len(data), 1)
    if op == "flip":
        i = m[1] % n
        return data[:i] + bytes([data[i] ^ m[2]]) + data[i + 1 :] if data else data
    if op == "truncate":
        return data[: m[1] % n]
    if op == "insert":
        i = m[1] % n
        return data[:i] + m[2] + data[i:]
    if op == "garbage":
        return m[1]
    if op == "splice":
        i = m[1] % n
        return data[:i] + SPLICES[m[2]].encode("utf-8", "surrogatepass") + data[i:]
    return _structural(data, kind, m)


# --- valid inputs, one folder per format ---------------------------------------------------------


def _bench(root: Path):
    from minibench import make_minibench

    root.mkdir()
    make_minibench(root)


def _run(root: Path):
    from memeval.cli import main

    bench = root.parent / "run-bench"
    _bench(bench)
    assert main(["run", "--bench", str(bench), "--system", "bm25", "--out", str(root), "--no-progress"]) == 0


def _longmemeval(root: Path):
    from test_loaders_longmemeval import _sample

    root.mkdir()
    (root / "longmemeval_s.json").write_text(json.dumps(_sample()[:4]), encoding="utf-8")


def _locomo(root: Path):
    from test_loaders_locomo import _conv

    root.mkdir()
    (root / "locomo10.json").write_text(json.dumps([_conv("conv-1"), _conv("conv-2", "Ann", "Bo")]), encoding="utf-8")


def _glasshouse(root: Path):
    from test_loaders_glasshouse import make_folder

    make_folder(root)


BOOK_IDS = ("layer1_01_bank_account", "layer2_01_multiple_vehicles", "layer3_01_travel_coordination")


def _booksuite(root: Path):
    from booksuite_paths import SUITE

    picked = [
        "layer1/01_bank_account_setup.yaml",
        "layer2/01_multiple_vehicles.yaml",
        "layer3/01_travel_coordination.yaml",
    ]
    for rel in picked:
        (root / "test_cases" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SUITE / "test_cases" / rel, root / "test_cases" / rel)
    from memeval.bench.loaders.booksuite import load_booksuite

    ids = [c.test_id for c in load_booksuite(root).cases]
    assert tuple(ids) == BOOK_IDS
    gold = json.loads((SUITE / "fixtures" / "gold_facts.json").read_text(encoding="utf-8"))
    (root / "fixtures").mkdir()
    (root / "fixtures" / "gold_facts.json").write_text(
        json.dumps({k: v for k, v in gold.items() if k in ids}, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    (root / "responses.json").write_text(json.dumps({"sysA": {t: f"answer {t}" for t in ids}}), encoding="utf-8")


def _multiturn(root: Path):
    from memeval.multiturn.agents import make_agent
    from memeval.multiturn.runner import run_suite
    from memeval.multiturn.suite import generate_suite, save_suite

    suite = generate_suite(3, 3, 1, "r5")
    save_suite(suite, root)
    run_suite(suite, make_agent("correct"), root / "records.jsonl")


# --- readers --------------------------------------------------------------------------------------


def read_bench(d: Path, out: Path):
    from memeval.audit import audit
    from memeval.bench.io import load_bench, read_questions, read_turns

    b = load_bench(d)
    for t in b.tiers:
        read_turns(d / t.turns_file)
        read_questions(d / t.questions_file)
    audit(d)


def read_run(d: Path, out: Path):
    from memeval.analysis.aggregate import latency_table, load_records, manifest_summary, overall_table, tier_axis_table

    df = load_records(d)
    manifest_summary(d)
    overall_table(df), tier_axis_table(df), latency_table(df)


def import_longmemeval(d: Path, out: Path):
    from memeval.bench.loaders import import_bench

    import_bench("longmemeval", [d / "longmemeval_s.json"], out)


def import_locomo(d: Path, out: Path):
    from memeval.bench.loaders import import_bench

    import_bench("locomo", [d / "locomo10.json"], out)


def import_glasshouse(d: Path, out: Path):
    from memeval.bench.loaders import import_bench

    import_bench("glasshouse", [d], out)


def _longmemeval_v2(root: Path):
    from lme_v2_fixture import make_fixture

    make_fixture(root, checksums=False)


def import_longmemeval_v2(d: Path, out: Path):
    from memeval.bench.loaders import import_bench

    import_bench("longmemeval-v2", [d], out, tier="medium")


def import_booksuite(d: Path, out: Path):
    from memeval.bench.loaders import import_bench
    from memeval.bench.loaders.booksuite import read_responses

    read_responses(d / "responses.json", set(BOOK_IDS))
    import_bench("booksuite", [d], out)


def read_multiturn(d: Path, out: Path):
    from memeval.multiturn.rates import format_pass_rates, pass_rates, results_frame
    from memeval.multiturn.records import read_sample_records
    from memeval.multiturn.suite import load_suite

    load_suite(d)
    format_pass_rates(pass_rates(results_frame(read_sample_records(d / "records.jsonl"))))


#: format -> (builder, reader, mutable files and their kind, examples)
FORMATS = {
    "bench": (
        _bench,
        read_bench,
        {
            "bench.yaml": "yaml",
            "turns_core.jsonl": "jsonl",
            "questions_core.jsonl": "jsonl",
            "questions_big.jsonl": "jsonl",
        },
        400,
    ),
    "run": (_run, read_run, {"manifest.json": "json", "records.jsonl": "jsonl"}, 400),
    "longmemeval": (_longmemeval, import_longmemeval, {"longmemeval_s.json": "json"}, 400),
    "locomo": (_locomo, import_locomo, {"locomo10.json": "json"}, 400),
    "longmemeval-v2": (
        _longmemeval_v2,
        import_longmemeval_v2,
        {"questions.jsonl": "jsonl", "trajectories.jsonl": "jsonl", "haystacks/lme_v2_medium.json": "json"},
        100,
    ),
    "glasshouse": (
        _glasshouse,
        import_glasshouse,
        {
            "glasshouse_v0.1_core.jsonl": "jsonl",
            "glasshouse_v0.1_small.jsonl": "jsonl",
            "questions_core.jsonl": "jsonl",
            "questions_small.jsonl": "jsonl",
            "questions_xling.jsonl": "jsonl",
            "glasshouse_v0.1_probes.jsonl": "jsonl",
        },
        400,
    ),
    "booksuite": (
        _booksuite,
        import_booksuite,
        {
            "test_cases/layer1/01_bank_account_setup.yaml": "yaml",
            "test_cases/layer2/01_multiple_vehicles.yaml": "yaml",
            "fixtures/gold_facts.json": "json",
            "responses.json": "json",
        },
        300,
    ),
    "multiturn": (
        _multiturn,
        read_multiturn,
        {
            "suite.yaml": "yaml",
            "samples.jsonl": "jsonl",
            "fixtures.jsonl": "jsonl",
            "configs.jsonl": "jsonl",
            "sessions.jsonl": "jsonl",
            "state_labels.jsonl": "jsonl",
            "records.jsonl": "jsonl",
        },
        400,
    ),
}


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-bases")
    out = {}
    for name, (build, read, files, _) in FORMATS.items():
        d = root / name
        build(d)
        read(d, root / f"{name}-check")  # every base is valid as built
        out[name] = d
    return out


def _listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


class Inputs:
    """One hard-linked copy of a base folder, which every example of a format reuses: the mutated file is
    replaced, then linked back to the base's; the folder takes a new name for each example (a reader
    that caches by path never meets an earlier example's file). Anything a reader added to or removed
    from the folder sends the next example to a fresh copy. (A fresh temporary copy per example spent a
    third of a millisecond to a millisecond of CPU in mkdir/link/rmdir, times 2,800.)"""

    def __init__(self, base: Path, tmp: Path):
        self.base, self.tmp, self.n = base, tmp, 0
        self.files = _listing(base)
        self.d = tmp / "in-0"
        shutil.copytree(base, self.d, copy_function=os.link)  # hard links: a mutated file is replaced, not edited

    def next(self) -> Path:
        self.n += 1
        d = self.tmp / f"in-{self.n}"
        os.rename(self.d, d)
        self.d = d
        return d

    def restore(self, rel: str) -> None:
        target = self.d / rel
        if target.is_file():
            target.unlink()
        if _listing(self.d) == [f for f in self.files if f != rel] and not target.exists():
            os.link(self.base / rel, target)
            return
        shutil.rmtree(self.d)  # a reader changed the folder: the next example gets a fresh copy
        shutil.copytree(self.base, self.d, copy_function=os.link)


def check_one(inputs: Inputs, reader, rel: str, kind: str, m) -> None:
    d = inputs.next()
    tmp = inputs.tmp
    target = d / rel
    data = mutate(target.read_bytes(), kind, m)
    target.unlink()
    target.write_bytes(data)
    out = tmp / "out"
    try:
        try:
            reader(d, out)
        except MemevalError as e:
            text = str(e)
            assert text and "\n" not in text and "\r" not in text, repr(text)
            leftovers = [p.name for p in tmp.iterdir() if p.name != d.name]
            assert leftovers == [], f"a refused import left {leftovers}"
        except Exception:  # anything else is a traceback for the user
            pytest.fail(f"{rel} mutated by {str(m)[:120]}: {traceback.format_exc(limit=-4)[-2500:]}")
    finally:  # the next example (or hypothesis's shrinking of a failure) starts from the base again
        for p in tmp.iterdir():  # what an accepted import wrote
            if p.name != d.name:
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
        inputs.restore(rel)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_mutated_inputs_are_read_or_refused_in_one_line(bases, fmt):
    _, reader, files, n = FORMATS[fmt]
    names = sorted(files)

    with tempfile.TemporaryDirectory(prefix="memeval-fuzz-") as tmp:
        inputs = Inputs(bases[fmt], Path(tmp))

        @settings(
            max_examples=n, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(st.sampled_from(names), MUTATION)
        def prop(rel, m):
            check_one(inputs, reader, rel, files[rel], m)

        prop()


def test_at_least_2000_mutated_inputs():
    assert sum(n for *_, n in FORMATS.values()) >= 2000


def test_the_mutations_do_change_the_files():
    """The suite's strength: each kind of mutation yields bytes the readers must refuse."""
    data = b'{"a": 1, "b": [1, 2]}\n'
    assert mutate(data, "jsonl", ("garbage", b"\xff\xfe")) == b"\xff\xfe"
    assert mutate(data, "jsonl", ("truncate", 5)) == data[:5]
    assert DEEP.encode() in mutate(data, "jsonl", ("value", 0, 1, VALUES.index("@@DEEP@@")))
    assert BIG.encode() in mutate(b"n: 1\n", "yaml", ("value", 0, 0, VALUES.index("@@BIG@@")))
    assert json.loads(mutate(data, "jsonl", ("delete", 0, 0))) == {"b": [1, 2]}


# --- the CLI, a handful of cases -------------------------------------------------------------------


def _cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "memeval.cli", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


#: the case run as a child process (exit status and stderr of a real ``python -m memeval.cli``); the others
#: call ``memeval.cli.main`` in the test's process (tests/incli.py: the same code path without ~1.5 s of imports)
IN_A_CHILD = "bench-binary"


@pytest.mark.parametrize(
    "case",
    [
        "bench-binary",
        "bench-n_turns",
        "records-score",
        "records-nonobject",
        "manifest-list",
        "lme-deep",
        "locomo-bigint",
        "multiturn-binary",
    ],
)
def test_cli_bad_input_is_one_line_exit_2(bases, tmp_path, case, capsys, monkeypatch):
    d = tmp_path / "in"
    fmt = case.split("-")[0].replace("records", "run").replace("manifest", "run").replace("lme", "longmemeval")
    shutil.copytree(bases[fmt], d)
    if case == "bench-binary":
        (d / "bench.yaml").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00garbage")
        args = ["audit", d]
    elif case == "bench-n_turns":
        meta = yaml.safe_load((d / "bench.yaml").read_text())
        meta["tiers"][0]["n_turns"] = "lots"
        (d / "bench.yaml").write_text(yaml.safe_dump(meta))
        args = ["audit", d]
    elif case in ("records-score", "records-nonobject"):
        lines = (d / "records.jsonl").read_text().splitlines()
        rec = json.loads(lines[1])
        rec["score"] = "high"
        lines[1] = json.dumps(rec) if case == "records-score" else "[1, 2]"
        (d / "records.jsonl").write_text("\n".join(lines) + "\n")
        args = ["summary", d]
    elif case == "manifest-list":
        (d / "manifest.json").write_text("[1]")
        args = ["summary", d]
    elif case == "lme-deep":
        (d / "longmemeval_s.json").write_text("[" + DEEP + "]")
        args = ["import", "longmemeval", d / "longmemeval_s.json", "--out", tmp_path / "out"]
    elif case == "locomo-bigint":
        (d / "locomo10.json").write_text('[{"sample_id": ' + BIG + "}]")
        args = ["import", "locomo", d / "locomo10.json", "--out", tmp_path / "out"]
    else:
        (d / "records.jsonl").write_bytes(b"\xff\xd8\xff\xe0 binary\n")
        args = ["multiturn", "summary", d / "records.jsonl"]
    if case == IN_A_CHILD:
        r = _cli(*args, cwd=tmp_path)
    else:
        monkeypatch.chdir(tmp_path)
        r = memeval_cli(capsys, *args)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith("memeval ") and str(d.name) in r.stderr
    assert not (tmp_path / "out").exists()
