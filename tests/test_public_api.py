"""``import memeval`` gives what a notebook needs, and load_runs → polars → pandas works."""

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import memeval
import memeval.audit  # noqa: F401  (binds the subpackages on the package, as any real session does)
import memeval.run  # noqa: F401


def test_a_notebook_cell_generates_runs_loads_and_converts_to_pandas(tmp_path):
    bench = memeval.generate("tiny", 1, tmp_path / "bench")
    run_dir = memeval.run_system(bench, "bm25", tiers=["core"], out=tmp_path / "run", progress=False)
    df = memeval.load_runs([run_dir])
    pdf = df.to_pandas()
    n = len(memeval.read_records(run_dir))
    assert n > 10 and len(pdf) == df.height == n
    assert set(pdf["system"]) == {"bm25"} and "score" in pdf.columns
    fig = memeval.plots.degradation_curve(df)
    assert fig.data and memeval.load_bench(bench).name == "lifelog"
    assert memeval.audit_bench(bench, ["core"]).check("bounds").status == "pass"


def test_every_public_name_resolves():
    for name in memeval.__all__:
        assert getattr(memeval, name) is not None, name


def test_import_memeval_stays_cheap():
    code = "import sys, memeval; print(sorted(m for m in ('polars', 'plotly', 'httpx') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


#: the documented API, pinned (httpx's test_exported_members.py is the model): adding, renaming or
#: dropping a public name is a decision, made here and in the docs, never a side effect
PUBLIC = [
    "BaseMemorySystem",
    "CORE",
    "Capabilities",
    "ChatClient",
    "InputError",
    "MULTITURN_GRADER_CONFIG",
    "Manifest",
    "MemevalError",
    "Memory",
    "MemorySystem",
    "NOTEBOOK",
    "Recall",
    "Record",
    "RubricJudge",
    "RuleExtractor",
    "RunConfig",
    "SystemCallError",
    "TraceBrowser",
    "__version__",
    "aggregate",
    "anchored",
    "attribute",
    "attributed",
    "attribution_split",
    "audit_bench",
    "bad_turn_figure",
    "bad_turn_histogram",
    "bench_of_run",
    "booksuite_table_text",
    "build_probes",
    "builtin_runs",
    "case_frame",
    "compare_runs",
    "correction_breakdown",
    "cost_table",
    "default_suite_dir",
    "drilldown",
    "dry_validity_gate",
    "ensure_bench",
    "evidence_texts",
    "extractor_accuracy",
    "failed_records",
    "gate_html",
    "generate",
    "generate_suite",
    "grade_leniency",
    "html_table",
    "intervals",
    "judges",
    "label_systems",
    "lafs_frontiers",
    "latest_sample_records",
    "layer_figure",
    "layer_html",
    "layer_table",
    "load_bench",
    "load_booksuite",
    "load_prices",
    "load_runs",
    "load_suite",
    "make_agent",
    "make_system",
    "natural_key",
    "operating_points",
    "paired_diff",
    "paired_differences",
    "pass_rates",
    "plots",
    "process_directions",
    "read_booksuite_responses",
    "read_manifest",
    "read_records",
    "read_sample_records",
    "regrade",
    "render_report",
    "render_sample",
    "render_trace_html",
    "results_frame",
    "rows_table",
    "run_folders",
    "run_served",
    "run_suite",
    "run_system",
    "run_systems",
    "save_suite",
    "score_answer_sets",
    "setup_notebook",
    "shares_figure",
    "side_by_side",
    "stored_scores",
    "strata_figure",
    "stub_endpoints",
    "sweep_systems",
    "sweep_table",
    "two_gradings",
    "wilson_interval",
    "with_flips",
    "with_interval_text",
    "with_prices",
    "worst_questions_table",
]


def test_the_public_surface_is_pinned():
    assert sorted(memeval.__all__) == PUBLIC
    assert sorted(dir(memeval)) == PUBLIC
    assert set(memeval.CORE) | set(memeval.NOTEBOOK) == set(PUBLIC) - {"__version__", "CORE", "NOTEBOOK"}


def test_no_private_name_is_public():
    assert [n for n in memeval.__all__ if n.startswith("_") and n != "__version__"] == []
    for name in memeval.__all__:  # a public module declares its own surface, without private names
        obj = getattr(memeval, name)
        if inspect.ismodule(obj):
            assert [n for n in getattr(obj, "__all__", ()) if n.startswith("_")] == [], name


def test_every_core_name_has_a_runnable_example_and_every_notebook_name_a_docstring():
    """Core names document themselves with a docstring example (run by ``--doctest-modules``); the
    notebook helpers with a docstring (the notebook tests run each of them)."""
    missing = [n for n in memeval.CORE if ">>>" not in (inspect.getdoc(getattr(memeval, n)) or "")]
    undocumented = [n for n in memeval.NOTEBOOK if not inspect.getdoc(getattr(memeval, n))]
    assert missing == [] and undocumented == []


def _deep_imports(code: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memeval."):
            found.append(f"from {node.module} import ...")
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.startswith("memeval.")]
    return found


def test_notebooks_and_examples_import_only_the_public_surface():
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted([*root.glob("notebooks/*.py"), *root.glob("examples/*.py")]):
        found += [f"{path.name}: {x}" for x in _deep_imports(path.read_text())]
    for path in sorted(root.glob("notebooks/*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        found += [f"{path.name}: {x}" for x in _deep_imports(code)]
    assert found == []
    assert _deep_imports("from memeval.analysis.tables import html_table\nimport memeval") != []  # the check bites


def test_the_package_ships_its_type_marker():
    from importlib import resources

    assert resources.files("memeval").joinpath("py.typed").is_file()
