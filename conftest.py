"""Names the docstring examples of the public API use (``pytest --doctest-modules``).

- ``tmp``: a fresh empty folder for the example;
- ``tiny_bench``: the ``tiny`` preset, seed 1, generated once per session (for every xdist worker);
- ``tiny_run``: a dry ``bm25`` run over it, made once per session (read-only: examples write elsewhere).
"""

from pathlib import Path

import pytest

from memeval.analysis.lazy_iri import defer_iri_grammar

defer_iri_grammar()  # each test process imports nbformat: skip jsonschema's ~3 s IRI grammar until a check


@pytest.fixture(scope="session")
def _tiny(tmp_path_factory) -> tuple[Path, Path]:
    from tests.built_once import built_once

    def build(root: Path) -> Path:
        from memeval.bench.lifelog import generate
        from memeval.run import run_system

        bench = generate("tiny", 1, root / "data" / "lifelog-tiny-s1")
        return run_system(bench, "bm25", runs_root=root / "runs", progress=False)

    root, run = built_once(tmp_path_factory, "doctest-project", build)  # once for all xdist workers
    return root / "data" / "lifelog-tiny-s1", Path(run)


@pytest.fixture(autouse=True)
def _doctest_names(request) -> None:
    """A docstring example's names; other tests get nothing (not even a ``tmp_path`` made for them)."""
    if not isinstance(request.node, pytest.DoctestItem):
        return
    namespace = request.getfixturevalue("doctest_namespace")
    namespace["tmp"] = request.getfixturevalue("tmp_path")
    if "tiny_" in request.node.dtest.docstring:
        namespace["tiny_bench"], namespace["tiny_run"] = request.getfixturevalue("_tiny")
