"""notebooks/book_layers.ipynb executed with papermill, and the helpers it uses."""

import json
import re
from pathlib import Path

import pytest

from memeval.analysis.booksuite import case_frame, default_suite_dir, layer_figure, layer_frame
from memeval.scoring.booksuite_scores import CaseScore, layer_table

from booksuite_paths import SUITE
from notebook_project import assert_clean, notebook_project

NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "book_layers.ipynb"


def _rows(text: str) -> dict[str, list[str]]:
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(Layer \d|Overall)\S*.*?((?:\s+[\d.—]+)+)$", line)
        if m:
            out[m.group(1)] = m.group(2).split()
    return out


def _judge(body):
    """A scripted judge: excellent on every dimension when the graded answer holds a digit, else fail."""
    answer = body["messages"][1]["content"].rsplit("## The answer to grade", 1)[1]
    g = 4 if any(ch.isdigit() for ch in answer) else 1
    verdict = {
        d: {"grade": g, "evidence": "quoted", "boundary": "b"}
        for d in ("precision", "recall", "reasoning", "proactivity")
    }
    verdict["hallucination"] = {"veto": False, "evidence": ""}
    return json.dumps(verdict)


# one xdist worker runs this module: the executed notebook, built by a module fixture, is built once
pytestmark = pytest.mark.xdist_group("booksuite_notebook")


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    from memeval.analysis.report import execute_notebook
    from memeval.testing.chat_stub import ScriptedChatServer

    work = tmp_path_factory.mktemp("book_layers")
    project = tmp_path_factory.mktemp("book_layers_project")
    with ScriptedChatServer(_judge) as srv:
        nb = execute_notebook(
            NOTEBOOK,
            {
                "suite_dir": str(SUITE),
                "work_dir": str(work),
                "judge_url": srv.base_url,
                "judge_model": "scripted",
                "judge_key_env": "MEMEVAL_NO_KEY",
            },
            cwd=notebook_project(project),
            timeout=300,
        )
        assert len(srv.requests) == 32  # 4 canned systems x 8 answered cases
    assert_clean(project)
    return nb


def _streams(nb) -> list[str]:
    return [o["text"] for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream"]


def test_notebook_reproduces_the_chapter_table(executed):
    table = next(t for t in _streams(executed) if "full_context" in t)
    # SOURCE.md reference, columns full_context, json_cards, simple_notes, no_memory
    assert _rows(table) == {
        "Layer 1": ["1.000", "1.000", "0.417", "0.000"],
        "Layer 2": ["1.000", "1.000", "0.333", "0.000"],
        "Layer 3": ["1.000", "1.000", "0.125", "0.000"],
        "Overall": ["1.000", "1.000", "0.323", "0.000"],
    }
    figs = [
        o["data"]["application/vnd.plotly.v1+json"]
        for c in executed.cells
        for o in c.get("outputs", [])
        if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    assert len(figs) == 3  # canned, built-in systems, judge
    simple = next(tr for tr in figs[0]["data"] if tr["name"] == "simple_notes")
    assert [round(y, 3) for y in simple["y"]] == [0.417, 0.333, 0.125, 0.323]
    # each mean with its interval: in the figure's bars and in the HTML table beside the text one
    up = simple["error_y"]["array"]
    assert len(up) == 4 and all(u >= 0 for u in up) and any(u > 0 for u in up)
    html = [
        o["data"]["text/html"] for c in executed.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})
    ]
    assert any(re.search(r"<td>0\.323 \[0\.\d\d–0\.\d\d\] n=8</td>", h) for h in html)


def test_notebook_runs_the_builtin_systems_on_all_cases(executed):
    streams = _streams(executed)
    assert any("answers per system: no_memory 60, bm25 60, oracle 60, recent 60" in s for s in streams)
    assert not any(re.search(r"[{]'|shape: \(", s) for s in streams)  # no raw dict, no raw polars frame
    table = next(t for t in streams if "oracle" in t and "Layer 1" in t)
    header = next(line for line in table.splitlines() if line.startswith("Layer "))
    cols = header.split()[1:]
    assert cols == ["no_memory", "bm25", "oracle", "recent"]
    rows = _rows(table)
    at = {k: dict(zip(cols, v)) for k, v in rows.items()}
    assert {k: v["no_memory"] for k, v in at.items()} == dict.fromkeys(rows, "0.000")
    # oracle gets the turns containing a gold fact: every fact except the two the conversations never
    # state verbatim ("Amex Gold" in layer2_03, 2 of 3 facts; "600-800" in layer3_04, 3 of 4 facts)
    assert [at[k]["oracle"] for k in ("Layer 1", "Layer 2", "Layer 3", "Overall")] == [
        "1.000",
        f"{(1 + 2 / 3) / 2:.3f}",
        f"{(1 + 3 / 4) / 2:.3f}",
        f"{(4 + 1 + 2 / 3 + 1 + 3 / 4) / 8:.3f}",
    ]


def test_notebook_runs_the_rubric_judge_when_given_an_endpoint(executed):
    table = next(t for t in _streams(executed) if t.startswith("Memory system comparison (judge"))
    canned = json.loads((SUITE / "fixtures" / "system_responses.example.json").read_text())
    # the scripted judge gives reward 1 to an answer with a digit and 0 otherwise: the overall mean is
    # the share of each system's answers that contain a digit
    want = [
        f"{sum(any(c.isdigit() for c in a) for a in canned[s].values()) / 8:.3f}"
        for s in ("full_context", "json_cards", "simple_notes", "no_memory")
    ]
    assert _rows(table)["Overall"] == want
    assert any("model scripted" in t and "prompt_hash" in t for t in _streams(executed))


def test_notebook_is_committed_without_outputs():
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")
    assert any("parameters" in c.metadata.get("tags", []) for c in nb.cells)
    assert (NOTEBOOK.with_suffix(".py")).is_file()


def test_layer_frame_and_figure_from_scores():
    scores = [
        CaseScore("a", "t1", "layer1", "keyword-recall", "scored", 1.0, True),
        CaseScore("a", "t2", "layer2", "keyword-recall", "scored", 0.5, False),
        CaseScore("b", "t1", "layer1", "keyword-recall", "missing"),
        CaseScore("b", "t2", "layer2", "keyword-recall", "scored", 0.0, False),
    ]
    rows = layer_table(scores)
    df = layer_frame(rows)
    assert df.filter(df["layer"] == "Overall").select("system", "score", "n").rows() == [("a", 0.75, 2), ("b", 0.0, 1)]
    assert df.filter((df["layer"] == "Layer 1 · Basic Recall") & (df["system"] == "b"))["score"].to_list() == [None]
    wide = case_frame(scores)
    assert wide.columns == ["test_id", "layer", "a", "b"]
    assert wide.rows() == [("t1", "layer1", 1.0, None), ("t2", "layer2", 0.5, 0.0)]
    fig = layer_figure(rows, "t")
    assert [tr.name for tr in fig.data] == ["a", "b"] and list(fig.data[0].y) == [1.0, 0.5, 0.75]


def test_default_suite_dir_is_the_shipped_copy():
    assert default_suite_dir().resolve() == SUITE.resolve()
