"""Issue 24, items 3, 5 and 6: run folders and multi-turn files are never written through symbolic
links; records are checked on read (score range, finite numbers, one record per question and epoch) by
every reader; multi-turn runs have one writer, duplicate detection and one-line errors for a memory
server that refuses or is gone; Ctrl-C at any moment is one line."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memeval.cli import main
from memeval.errors import InputError
from memeval.multiturn.records import read_sample_records
from memeval.run import read_records, run_system
from incli import memeval_cli
from minibench import make_minibench
from test_multiturn_memory import write_suite


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return make_minibench(tmp_path_factory.mktemp("b") / "bench")


@pytest.fixture(scope="module")
def good_run(bench, tmp_path_factory):
    return run_system(bench, "bm25:k=3", out=tmp_path_factory.mktemp("r") / "run", progress=False)


def _one_line(p) -> str:
    err = p.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# -- item 3: symbolic links ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [".lock", "records.jsonl"])
def test_a_symlink_inside_a_run_folder_is_refused_and_its_target_untouched(bench, tmp_path, name, capsys):
    out = tmp_path / "run"
    out.mkdir()
    target = tmp_path / "outside.txt"
    target.write_text("precious\n")
    (out / name).symlink_to(target)
    p = memeval_cli(capsys, "run", "--bench", bench, "--system", "bm25", "--out", str(out), "--no-progress")
    assert p.returncode == 1 and "symbolic link" in _one_line(p) and name in p.stderr
    assert target.read_text() == "precious\n"


def test_a_dangling_symlink_is_refused_too_and_nothing_is_created_through_it(bench, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "records.jsonl").symlink_to(tmp_path / "would-be-created.jsonl")
    p = memeval_cli(capsys, "run", "--bench", bench, "--system", "bm25", "--out", str(out), "--no-progress")
    assert p.returncode == 1 and "symbolic link" in _one_line(p)
    assert not (tmp_path / "would-be-created.jsonl").exists()


def test_multiturn_records_and_their_lock_are_never_written_through_a_link(tmp_path, capsys):
    folder = write_suite(tmp_path / "s")
    target = tmp_path / "outside.jsonl"
    target.write_text("")
    for link in (tmp_path / "r.jsonl", tmp_path / ".q.jsonl.lock"):
        link.symlink_to(target)
    for out in ("r.jsonl", "q.jsonl"):
        p = memeval_cli(capsys, "multiturn", "run", str(folder), "-o", str(tmp_path / out), "--runs", "1")
        assert p.returncode == 1 and "symbolic link" in _one_line(p)
    assert target.read_text() == ""


# -- item 5: records checked on read ---------------------------------------------------------------------------------
def _corrupt(run_dir: Path, tmp_path: Path, edit) -> Path:
    """A copy of ``run_dir`` with its records.jsonl lines passed through ``edit``."""
    import shutil

    dst = tmp_path / "bad"
    shutil.copytree(run_dir, dst, ignore=shutil.ignore_patterns(".lock"))
    lines = (dst / "records.jsonl").read_text().splitlines()
    (dst / "records.jsonl").write_text("\n".join(edit(lines)) + "\n")
    return dst


def _set(line: str, **kv) -> str:
    rec = json.loads(line)
    rec.update(kv)
    return json.dumps(rec)  # NaN and Infinity as Python writes them (not JSON, yet json.loads reads them)


@pytest.mark.parametrize(
    "edit, field, why",
    [
        (lambda ls: [_set(ls[0], score=float("nan")), *ls[1:]], "score", "finite"),
        (lambda ls: [_set(ls[0], latency_ms=float("inf")), *ls[1:]], "latency_ms", "finite"),
        (lambda ls: [_set(ls[0], score=5.0), *ls[1:]], "score", "[0, 1]"),
        (lambda ls: [_set(ls[0], score=-1), *ls[1:]], "score", "[0, 1]"),
        (lambda ls: [*ls, ls[0]], "qid", "duplicate record"),
    ],
    ids=["nan", "inf", "five", "minus-one", "duplicate"],
)
def test_bad_records_are_one_line_naming_file_line_and_field_in_every_reader(
    good_run, tmp_path, edit, field, why, capsys
):
    bad = _corrupt(good_run, tmp_path, edit)
    with pytest.raises(InputError, match=why) as e:
        read_records(bad)
    msg = str(e.value)
    assert "records.jsonl:" in msg and f"field '{field}'" in msg, msg
    from memeval.analysis.runs import headline_lines
    from memeval.workbench import load_runs

    for reader in (load_runs, headline_lines):
        with pytest.raises(InputError, match=why):
            reader([bad] if reader is load_runs else bad)
    # the commands in process (memeval.cli.main, what `python -m memeval` runs): their one line, not a process
    for argv in (["summary", str(bad)], ["diff", str(good_run), str(bad)], ["regrade", str(bad), "--mode", "dry"]):
        p = memeval_cli(capsys, *argv)
        assert p.returncode == 2 and why in _one_line(p) and "records.jsonl:" in p.stderr, (argv, p.stderr)
    site = tmp_path / "site"
    p = memeval_cli(capsys, "view", str(tmp_path), "--out", str(site), "--no-progress")
    assert p.returncode == 0 and f"skipped {bad}" in p.stderr and why in p.stderr, p.stderr


# -- item 6: multi-turn on the run machinery ------------------------------------------------------------------------
_HOLD = """
import sys, time
from pathlib import Path
from memeval.atomic import WriterLock
out = Path(sys.argv[1])
WriterLock(out.parent / f".{out.name}.lock").acquire()
print("locked", flush=True)
time.sleep(600)
"""


def test_a_second_multiturn_writer_is_refused_naming_the_holder(tmp_path, capsys):
    """The holder is a child process (a lock held by another process); the refused writer runs in process."""
    folder = write_suite(tmp_path / "s")
    out = tmp_path / "r.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        p = memeval_cli(capsys, "multiturn", "run", str(folder), "-o", str(out), "--runs", "1")
        assert p.returncode == 1 and f"pid {holder.pid}" in _one_line(p) and "another memeval process" in p.stderr
    finally:
        holder.kill()
        holder.wait(30)
    assert main(["multiturn", "run", str(folder), "-o", str(out), "--runs", "1"]) == 0  # the holder is gone


def test_duplicated_multiturn_records_are_one_line(tmp_path, capsys):
    folder = write_suite(tmp_path / "s")
    out = tmp_path / "r.jsonl"
    assert main(["multiturn", "run", str(folder), "-o", str(out), "--runs", "1"]) == 0
    lines = out.read_text().splitlines()
    out.write_text("\n".join([*lines, lines[0]]) + "\n")  # what two writers without a lock left
    with pytest.raises(InputError, match="duplicate record of sample") as e:
        read_sample_records(out)
    assert f":{len(lines) + 1}:" in str(e.value)
    p = memeval_cli(capsys, "multiturn", "summary", str(out))
    assert p.returncode == 2 and "duplicate record" in _one_line(p)


def test_multiturn_memory_server_refusing_or_gone_is_one_line(tmp_path, capsys):
    folder = write_suite(tmp_path / "s")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    p = memeval_cli(
        capsys, "multiturn", "run", str(folder), "-o", str(tmp_path / "r.jsonl"), "--memory", url, "--runs", "1"
    )
    assert p.returncode == 1 and "memory system" in _one_line(p) and "gave up" in p.stderr

    from memeval.systems import BM25
    from memeval.systems.server import ReferenceServer

    os.environ.pop("MEMEVAL_API_KEY", None)
    with ReferenceServer(BM25(k=3), token="tok") as srv:  # refuses: no token sent
        p = memeval_cli(
            capsys, "multiturn", "run", str(folder), "-o", str(tmp_path / "q.jsonl"), "--memory", srv.url, "--runs", "1"
        )
    assert p.returncode == 1 and "HTTP 401" in _one_line(p)


#: ``python -m memeval`` after saying so (``sys.argv[0]`` is ``-m`` while the package is imported, as
#: under ``-m``): the interpreter's own start-up (site, before any memeval code runs) is not memeval's to
#: handle, so the signal is sent only once the child is past it
_CHILD = (
    "import sys; sys.argv[0] = '-m'; print('up', file=sys.stderr, flush=True); import runpy; "
    "runpy._run_module_as_main('memeval')"
)


@pytest.mark.parametrize("delay", [0.1, 0.3, 0.6, 1.2])
def test_ctrl_c_at_any_moment_of_start_up_is_one_line(bench, tmp_path, delay):
    p = subprocess.Popen(
        [sys.executable, "-c", _CHILD, "run", "--bench", bench, "--system", "bm25", "--out", str(tmp_path / "r")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert p.stderr.readline().strip() == "up"
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    if p.returncode == 0 or (p.returncode == -signal.SIGINT and "status complete" in err):
        # it finished first: nothing to interrupt, or the signal landed while the interpreter was exiting
        assert "Traceback" not in err, err
        return
    lines = [
        x for x in err.strip().splitlines() if x.strip() and "%" not in x
    ]  # progress bars (and their cleared lines) aside
    assert p.returncode == 130 and "Traceback" not in err and len(lines) == 1 and "interrupted" in lines[0], err


#: a command whose work is polars queries, interrupted by one SIGINT while a query runs
_POLARS_CHILD = """
import os, signal, sys, threading
import polars as pl
from memeval import cli
from memeval.commands import summary

def queries(args):
    df = pl.DataFrame({"a": list(range(1_000_000))})
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    while True:
        df.lazy().sort("a", descending=True).collect()

summary.run = queries
sys.exit(cli.main(["summary", "any"]))
"""


def test_one_ctrl_c_inside_a_polars_query_is_one_line():
    """polars 2.1 raises one SIGINT that lands in a query twice (its own KeyboardInterrupt, then Python's
    handler's): the second must not turn the one-line message into a traceback (it did, after a run)."""
    p = subprocess.run([sys.executable, "-c", _POLARS_CHILD], capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stderr) == (130, "memeval summary: interrupted\n")


def test_main_hands_back_the_sigint_handler_after_an_interrupt(monkeypatch):
    """``main()`` in a kernel: after a Ctrl-C the kernel's own handler is in place again."""
    from memeval.commands import summary

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(summary, "run", interrupted)
    before = signal.getsignal(signal.SIGINT)
    assert main(["summary", "any"]) == 130
    assert signal.getsignal(signal.SIGINT) is before
