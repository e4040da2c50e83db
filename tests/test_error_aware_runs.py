"""Issue 25: failures are loud, explained and retried.

Error-aware runs (exit codes, statuses, re-asking errored questions, ``memeval retry``), error reasons
wherever a score is shown, the circuit breaker against a served system killed mid-run, one-line
contract errors, and served systems named by their own reply. Loopback servers only.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memeval.errors import SystemContractError, UsageError
from memeval.run import read_manifest, read_records, run_system
from memeval.run.records import current_records, record_key
from memeval.run.status import MaxErrors, errors_by_reason, run_status
from memeval.systems.registry import make_system
from incli import memeval_cli
from minibench import make_minibench

ROOT = Path(__file__).resolve().parents[1]

SYSTEMS = '''
import os
from memeval.systems.base import Recall


class Raising:
    name, version, params = "raising", "1", {}

    def reset(self):
        pass

    def ingest(self, session):
        pass

    def query(self, question, asked_at):
        raise ValueError("the index is not built")


class Dict(Raising):
    def query(self, question, asked_at):
        return {"memories": []}


class BadIngest(Raising):
    def ingest(self, session):
        raise RuntimeError("disk full")


class Flaky(Raising):
    """Raises for the questions whose text holds the word in FLAKY_WORD (unset: never)."""

    def query(self, question, asked_at):
        word = os.environ.get("FLAKY_WORD")
        if word and word in question.lower():
            raise ConnectionResetError(f"lost the backend while asking about {word}")
        return Recall(memories=("Dr Okafor on Pine Street",))
'''


@pytest.fixture
def bench(tmp_path):
    return make_minibench(tmp_path / "bench")


@pytest.fixture
def env(tmp_path):
    (tmp_path / "mods").mkdir(exist_ok=True)  # the cli fixture may have made it
    (tmp_path / "mods" / "h25systems.py").write_text(SYSTEMS)
    return {**os.environ, "PYTHONPATH": f"{tmp_path / 'mods'}{os.pathsep}{ROOT}"}


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    """``memeval ARGS`` in the test's process (tests/incli.py), ``h25systems`` importable: (exit code, stdout,
    stderr). ``flaky=WORD`` sets ``FLAKY_WORD`` for that call. The process boundary is not these tests'
    subject (the served system, a killed server and Ctrl-C below keep their child processes)."""
    (tmp_path / "mods").mkdir(exist_ok=True)
    (tmp_path / "mods" / "h25systems.py").write_text(SYSTEMS)
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    monkeypatch.delitem(sys.modules, "h25systems", raising=False)  # this test's file, not an earlier one's

    def run(*args, flaky: str | None = None) -> tuple[int, str, str]:
        if flaky:
            monkeypatch.setenv("FLAKY_WORD", flaky)
        else:
            monkeypatch.delenv("FLAKY_WORD", raising=False)
        p = memeval_cli(capsys, *args)
        return p.returncode, p.stdout, p.stderr

    return run


def _cli(*args, env=None, timeout=120):
    p = subprocess.run(
        [sys.executable, "-m", "memeval", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
    )
    return p.returncode, p.stdout, p.stderr


def _history(run_dir) -> list[dict]:
    return read_records(run_dir, history=True)


# -- 1. error-aware runs --------------------------------------------------------------------------------
def test_a_raising_system_exits_1_with_the_reason_on_stderr_and_status_failed(bench, tmp_path, cli):
    code, out, err = cli(
        "run",
        "--bench",
        bench,
        "--system",
        "python:h25systems:Raising",
        "--out",
        tmp_path / "r",
        "--no-progress",
    )
    assert code == 1, err
    assert out.strip() == str(tmp_path / "r")  # stdout stays the folder alone
    assert "memeval run: error: run failed: 8 of 8 questions are errors (--max-errors 0)" in err
    assert "ValueError: the index is not built (8)" in err
    assert "errors by reason: ValueError: the index is not built (8)" in err  # the headline says it too
    assert "weighted -" in err and "nan" not in err  # no score without graded questions, never nan
    m = read_manifest(tmp_path / "r")
    assert m["status"] == "failed" and m["n_errors"] == 8
    assert "Traceback" not in err
    code, out, err = cli("summary", tmp_path / "r", "--no-bounds")
    assert code == 0, err
    assert "status failed\n  errors by reason: ValueError: the index is not built (8)" in out
    assert "NaN" not in out and "nan" not in out and "graded" in out  # no score, and the n it stands on


def test_errors_within_max_errors_end_complete_with_errors_and_exit_0(bench, tmp_path, cli):
    code, _, err = cli(
        "run",
        "--bench",
        bench,
        "--system",
        "python:h25systems:Flaky",
        "--out",
        tmp_path / "r",
        "--no-progress",
        "--max-errors",
        "50%",
        flaky="dentist",
    )
    assert code == 0, err
    m = read_manifest(tmp_path / "r")
    n_err = sum(r["error"] is not None for r in read_records(tmp_path / "r"))
    assert 0 < n_err < 8 and m["status"] == "complete_with_errors" and m["max_errors"] == "50%"
    assert f"ConnectionResetError: lost the backend while asking about dentist ({n_err})" in err


def test_a_rerun_reasks_exactly_the_errored_questions_and_ends_complete(bench, tmp_path, cli):
    out = tmp_path / "r"
    args = ("run", "--bench", bench, "--system", "python:h25systems:Flaky", "--out", out, "--no-progress")
    code, _, err = cli(*args, flaky="dentist")
    assert code == 1
    first = _history(out)
    errored = {record_key(r) for r in first if r["error"]}
    assert errored and len(first) == 8

    code, _, err = cli(*args, "--keep-errors")  # kept: nothing asked, still failed
    assert code == 1 and len(_history(out)) == 8 and "keeping" in err

    code, _, err = cli(*args)  # the backend is back
    assert code == 0, err
    assert f"asking again {len(errored)} question" in err
    history = _history(out)
    assert len(history) == 8 + len(errored)
    assert {record_key(r) for r in history[8:]} == errored  # exactly the errored ones, each once
    current = read_records(out)
    assert len(current) == 8 and all(r["error"] is None for r in current)
    assert read_manifest(out)["status"] == "complete"


def test_memeval_retry_asks_the_errored_questions_again(bench, tmp_path, cli):
    out = tmp_path / "r"
    code, _, _ = cli(
        "run",
        "--bench",
        bench,
        "--system",
        "python:h25systems:Flaky",
        "--out",
        out,
        "--no-progress",
        flaky="beagle",
    )
    assert code == 1
    errored = {record_key(r) for r in _history(out) if r["error"]}
    code, stdout, err = cli("retry", out, "--no-progress")
    assert code == 0, err
    assert stdout.strip() == str(out) and f"asking again {len(errored)} question" in err
    assert {record_key(r) for r in _history(out)[8:]} == errored
    assert read_manifest(out)["status"] == "complete"


def test_every_reader_sees_the_newer_record_in_place_of_the_error(bench, tmp_path):
    from memeval.analysis.aggregate import load_records
    from memeval.analysis.runs import headline_lines

    rd = run_system(bench, "bm25", out=tmp_path / "r", progress=False)
    lines = (rd / "records.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    errored = {**first, "error": "HTTP 503", "score": None, "verdict": None}
    # the errored record first, the re-asked one after it (as a rerun appends it)
    (rd / "records.jsonl").write_text("\n".join([json.dumps(errored), *lines[1:], lines[0]]) + "\n")
    assert len(read_records(rd, history=True)) == 9
    assert len(read_records(rd)) == 8 and read_records(rd)[0] == first
    df = load_records([rd])
    assert df.height == 8 and df["error"].null_count() == 8
    assert "errors=0" in headline_lines(rd)[1]


def test_status_logic_takes_other_reasons():
    assert run_status(10, 0).status == "complete"
    assert run_status(10, 1).status == "failed"
    assert run_status(10, 1, MaxErrors.parse("1")).status == "complete_with_errors"
    assert run_status(10, 2, MaxErrors.parse("0.1")).status == "failed"
    s = run_status(10, 0, failed_because=["judge graded 4 of 10 (< 50%)"])
    assert s.status == "failed" and s.reasons == ("judge graded 4 of 10 (< 50%)",)
    for bad in ("ten", "-1", "150%", "1.5"):
        with pytest.raises(UsageError, match="--max-errors"):
            MaxErrors.parse(bad)


def test_errors_by_reason_counts_and_keeps_the_first_ids():
    recs = [{"tier": "t", "qid": f"q{i}", "error": "A: x" if i < 5 else f"B: {i}\nline two"} for i in range(8)]
    recs += [{"tier": "t", "qid": "ok", "error": None}]
    got = errors_by_reason(recs, n_first=2)
    assert [(r.reason, r.count, r.first) for r in got] == [
        ("A: x", 5, ("t/q0", "t/q1")),
        ("B: 5", 1, ("t/q5",)),
        ("B: 6", 1, ("t/q6",)),
        ("B: 7", 1, ("t/q7",)),
    ]
    assert got[1].example == "B: 5\nline two"
    assert current_records([]) == []


# -- 4. one-line contract errors ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, message",
    [
        ("bm25:k=ten", "system 'bm25:k=ten': parameter k must be an integer, got 'ten' (bm25 takes: k=integer)"),
        ("bm25:kk=10", "system 'bm25:kk=10': unknown parameter 'kk' (did you mean 'k'?); bm25 takes: k=integer"),
        ("recent:tokens=lots", "parameter tokens must be an integer, got 'lots'"),
        ("hybrid:k=3,modle=m", "unknown parameter 'modle' (did you mean 'model'?)"),
    ],
)
def test_bad_system_parameters_are_one_line(spec, message):
    with pytest.raises(SystemContractError) as e:
        make_system(spec)
    assert message in str(e.value) and e.value.exit_code == 2


def test_bad_parameters_and_a_dict_returning_query_exit_2_in_one_line(bench, tmp_path, cli):
    for spec in ("bm25:k=ten", "bm25:kk=10"):
        code, _, err = cli("run", "--bench", bench, "--system", spec, "--out", tmp_path / "x")
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    code, _, err = cli(
        "run", "--bench", bench, "--system", "python:h25systems:Dict", "--out", tmp_path / "d", "--no-progress"
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "system 'python:h25systems:Dict': query returned a dict, expected Recall" in err
    assert read_manifest(tmp_path / "d")["status"] == "error"


def test_a_crash_in_ingest_is_one_line_and_debug_shows_the_traceback(bench, tmp_path, env, cli):
    args = (
        "run",
        "--bench",
        bench,
        "--system",
        "python:h25systems:BadIngest",
        "--out",
        tmp_path / "i",
        "--no-progress",
    )
    code, _, err = cli(*args)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "system 'python:h25systems:BadIngest' raised in ingest of session 1 (core): RuntimeError: disk full" in err
    code, _, err = _cli("--debug", *args, env=env)  # a child: the traceback as a terminal shows it
    assert code == 1 and "Traceback" in err and "h25systems.py" in err and 'raise RuntimeError("disk full")' in err


# -- 3 and 5. a served system: its own name, and the circuit breaker ----------------------------------------
def _serve(env, *extra):
    p = subprocess.Popen(
        [sys.executable, "-m", "memeval", "serve", "bm25", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    line = p.stderr.readline()
    m = re.search(r"serving (\S+) on (http://\S+) ", line)
    assert m, line
    return p, m.group(2)


def _lines(path: Path) -> int:
    return path.read_text().count("\n") if path.exists() else 0


@pytest.mark.timeout(240)
def test_a_server_killed_mid_run_stops_it_in_one_line_and_a_rerun_resumes_to_complete(tmp_path, env, capsys):
    """The server killed and the run it stops are child processes (SIGKILL, an exit code); the restarted
    server and the resuming rerun run in this process (a server by its name and a resume are the subject)."""
    from memeval.systems.registry import make_system
    from memeval.systems.server import ReferenceServer

    bench = make_minibench(tmp_path / "bench")
    server, url = _serve(env, "--delay-ms", "20")
    out = tmp_path / "r"
    epochs = ("--epochs", "40")  # 320 questions: enough to kill the server mid-run
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memeval",
            "run",
            "--bench",
            bench,
            "--system",
            url,
            "--out",
            out,
            "--no-progress",
            *epochs,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        t0 = time.monotonic()
        while _lines(out / "records.jsonl") < 20:
            assert run.poll() is None and time.monotonic() - t0 < 120, run.communicate()
            time.sleep(0.05)
        server.send_signal(signal.SIGKILL)
        server.wait()
        killed = time.monotonic()
        _, err = run.communicate(timeout=60)
        stopped_in = time.monotonic() - killed
    finally:
        for p in (server, run):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert stopped_in < 30, stopped_in
    assert run.returncode == 1 and len(err.strip().splitlines()) == 1, err
    assert "system 'bm25-http' stopped answering" in err and "rerun to resume" in err
    m = read_manifest(out)
    assert m["status"] == "error" and "rerun to resume" in m["error"]
    total = len(_all_keys(bench))
    before = _history(out)
    errored = {record_key(r) for r in before if r["error"]}
    asked = {record_key(r) for r in before}
    assert len(asked) < total  # it stopped: the rest of the bench was not turned into error records

    # restarted, on another port: the same system (what `memeval serve bm25` serves) by its name
    with ReferenceServer(make_system("bm25")) as restarted:
        rerun = memeval_cli(
            capsys, "run", "--bench", bench, "--system", restarted.url, "--out", out, "--no-progress", *epochs
        )
    code, err = rerun.returncode, rerun.stderr
    assert code == 0, err
    if errored:
        assert f"asking again {len(errored)} question" in err
    history = _history(out)
    appended = [record_key(r) for r in history[len(before) :]]
    assert len(appended) == len(set(appended))
    assert set(appended) == errored | ({k for k in _all_keys(bench)} - asked)  # errored + never asked, once each
    current = read_records(out)
    assert len(current) == total and not any(r["error"] for r in current)
    assert read_manifest(out)["status"] == "complete"
    assert {r["system"] for r in current} == {"bm25-http"}


def _all_keys(bench, epochs=40):
    from memeval.bench import read_questions

    return {
        (t, q.id, e)
        for t in ("core", "big")
        for q in read_questions(Path(bench) / f"questions_{t}.jsonl")
        for e in range(epochs)
    }


@pytest.mark.timeout(400)
def test_a_served_run_is_named_by_the_server_not_its_port(bench, tmp_path, capsys):
    from memeval.analysis.aggregate import latency_table, load_records
    from memeval.systems.server import ReferenceServer
    from memeval.systems.baselines import BM25

    with ReferenceServer(BM25(k=3)) as srv:
        port = srv.url.rsplit(":", 1)[1]
        rd = run_system(bench, srv.url, runs_root=tmp_path / "runs", progress=False)
    assert rd.name.startswith("mini_bm25-http_dry_") and port not in rd.name
    recs = read_records(rd)
    assert {r["system"] for r in recs} == {"bm25-http"}
    m = read_manifest(rd)
    assert m["config"]["system"]["spec"].endswith(port)  # the URL: connection details, in the manifest only
    assert m["config"]["system"]["name"] == "bm25-http" and m["config"]["system"]["label"] == "bm25-http"
    assert latency_table(load_records([rd]))["system"].to_list() == ["bm25-http"]
    # in process (the names are the subject here, not the process boundary: that is the tests above)
    from memeval.cli import main

    capsys.readouterr()
    code = main(["summary", str(rd), "--no-bounds"])
    out = capsys.readouterr().out
    assert code == 0 and "bm25-http" in out and port not in out, out
    code = main(["view", str(tmp_path / "runs"), "--out", str(tmp_path / "site"), "--no-progress"])
    err = capsys.readouterr().err
    page = next((tmp_path / "site" / "runs").glob("*.html")).read_text()
    assert code == 0 and "<h1>bm25-http</h1>" in page and f":{port}" not in page.replace(str(rd), ""), err
    report = tmp_path / "latency.html"
    nb = str(ROOT / "notebooks" / "latency.py")
    code = main(["report", nb, "-p", "run_dirs", json.dumps([str(rd)]), "-o", str(report), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    html = report.read_text()
    assert "bm25-http" in html and f"127.0.0.1:{port}" not in html


# -- 6. a clean console ------------------------------------------------------------------------------------
def test_papermill_never_calls_an_annotated_parameter_unknown_and_a_truly_unknown_one_still_fails(tmp_path, caplog):
    import logging

    import nbformat

    from memeval.analysis.report import ReportError, execute_notebook

    cell = nbformat.v4.new_code_cell("run_dirs: list[str] | None = None", metadata={"tags": ["parameters"]})
    nb = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_code_cell("print(run_dirs)")])
    path = tmp_path / "p.ipynb"
    nbformat.write(nb, path)
    with caplog.at_level(logging.WARNING, logger="papermill"):
        out = execute_notebook(path, {"run_dirs": ["runs/x"]}, cwd=tmp_path)
    assert "['runs/x']" in out.cells[-1].outputs[0]["text"]
    assert not [r for r in caplog.records if "unknown parameter" in r.getMessage()]
    with pytest.raises(ReportError, match="unknown parameter tierz; this notebook takes: run_dirs"):
        execute_notebook(path, {"tierz": ["core"]}, cwd=tmp_path)


# -- 2. the run browser ----------------------------------------------------------------------------------------
@pytest.mark.timeout(300)
def test_the_run_browser_shows_complete_with_errors_in_amber_and_the_exception_text(bench, tmp_path, monkeypatch):
    from memeval.cli import main
    from memeval.systems.base import Recall
    from tests.browser import load_html, require_chromium

    class Erring:
        name, version, params = "erring", "1", {}

        def reset(self):
            pass

        def ingest(self, session):
            pass

        def query(self, question, asked_at):
            if "beagle" in question:
                raise KeyError("<b>beagle</b> index")
            return Recall(memories=("Dr Okafor on Pine Street",))

    import memeval.run.runner as runner

    real = runner.make_system
    monkeypatch.setattr(runner, "make_system", lambda spec, **kw: Erring() if spec == "erring" else real(spec, **kw))
    rd = run_system(bench, "erring", runs_root=tmp_path / "runs", progress=False, max_errors="50%")
    assert read_manifest(rd)["status"] == "complete_with_errors"
    assert main(["view", str(tmp_path / "runs"), "--out", str(tmp_path / "site"), "--no-progress"]) == 0
    page = next((tmp_path / "site" / "runs").glob("*.html"))
    html = page.read_text()
    assert "<b>beagle</b>" not in html and "&lt;b&gt;beagle&lt;/b&gt;" in html  # exception text escaped
    require_chromium()
    amber = "getComputedStyle(document.querySelector('.status-complete_with_errors')).color"
    rep = load_html(page, tmp_path / "run.png", evaluate={"color": amber})
    assert not rep.console_errors and not rep.page_errors and not rep.blocked_requests
    assert rep.values["color"] == "rgb(184, 110, 0)"  # amber, not the green of complete
    assert "status complete with errors" in rep.text
    assert "Errors" in rep.text and "KeyError: '<b>beagle</b> index' (2)" not in rep.text
    assert "KeyError: '<b>beagle</b> index'" in rep.text  # the exception text, shown as text
    assert "core/Q2" in rep.text and "big/Q2" in rep.text  # the first question ids
    index = load_html(tmp_path / "site" / "index.html", tmp_path / "index.png", evaluate={"color": amber})
    assert index.values["color"] == "rgb(184, 110, 0)" and "n=" in index.text  # a score beside its graded n


@pytest.mark.timeout(300)
def test_report_is_quiet_on_success_and_on_ctrl_c(tmp_path, env):
    import nbformat

    marker = tmp_path / "started"
    cells = [
        nbformat.v4.new_code_cell("wait = 0", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(wait)"),
    ]
    nb = tmp_path / "quiet.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), nb)
    code, _, err = _cli("report", nb, "-o", tmp_path / "ok.html", "--no-progress", env=env, timeout=240)
    assert code == 0 and err.strip() == "", err  # no kernel log line (e.g. "ERROR | KeyboardInterrupt caught")
    marker.unlink()
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memeval",
            "report",
            str(nb),
            "-p",
            "wait",
            "60",
            "-o",
            str(tmp_path / "x.html"),
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    try:
        t0 = time.monotonic()
        while not marker.exists():
            assert p.poll() is None and time.monotonic() - t0 < 120, p.communicate()
            time.sleep(0.1)
        os.killpg(p.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground process group
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130 and err.strip() == "memeval report: interrupted", err


def test_after_ctrl_c_in_a_render_the_kernel_shutdown_lines_are_dropped_and_nothing_else(monkeypatch):
    """The end-to-end test above depends on timing (the unwinding shutdown of the kernel logs, or not,
    before the process exits: seen under load); this pins the filter that makes it one line either way."""
    import logging

    from memeval.analysis import report

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage().splitlines()[0])

    monkeypatch.setattr(report._AfterInterrupt, "interrupted", False)
    with report._silent_after_interrupt():
        pass  # installs the filters on papermill's and asyncio's loggers
    handler = Keep()
    for name in ("papermill", "asyncio"):
        logging.getLogger(name).addHandler(handler)
    try:
        logging.getLogger("papermill").error("Kernel died while waiting for execute reply.")
        report._AfterInterrupt.interrupted = True
        logging.getLogger("papermill").error("Kernel died while waiting for execute reply.")
        logging.getLogger("asyncio").error("Task exception was never retrieved\nfuture: <Task finished>")
        logging.getLogger("papermill").error("Executing notebook failed")
    finally:
        for name in ("papermill", "asyncio"):
            logging.getLogger(name).removeHandler(handler)
    assert seen == ["Kernel died while waiting for execute reply.", "Executing notebook failed"]


def test_the_headline_is_printed_below_the_closed_progress_bars(bench, tmp_path, env):
    from pty_console import render, run_in_pty

    argv = [sys.executable, "-m", "memeval", "run", "--bench", bench, "--system", "bm25", "--out", str(tmp_path / "r")]
    code, out = run_in_pty(argv, {**env, "TERM": "xterm"})
    screen = [line for line in render(out) if line]
    assert code == 0, screen
    head = next(i for i, line in enumerate(screen) if line.startswith("bm25 on mini 1"))
    assert screen[head] == "bm25 on mini 1, mode dry, question set main, status complete", screen
    assert screen[head - 1].startswith("big: questions: 100%") and screen[head - 2].startswith("core: questions: 100%")
    assert not any("ingest" in line for line in screen)  # the ingest bars are closed and cleared
