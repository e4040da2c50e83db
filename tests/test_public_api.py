"""``import memeval`` gives what a notebook needs, and load_runs → polars → pandas works."""

import subprocess
import sys

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


def test_every_public_name_has_a_runnable_example():
    """Each public name documents itself with a docstring example (run by ``--doctest-modules``)."""
    import inspect

    missing = [
        n for n in memeval.__all__ if n != "__version__" and ">>>" not in (inspect.getdoc(getattr(memeval, n)) or "")
    ]
    assert missing == []


def test_the_package_ships_its_type_marker():
    from importlib import resources

    assert resources.files("memeval").joinpath("py.typed").is_file()
