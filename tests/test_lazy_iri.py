"""jsonschema's IRI grammar (``rfc3987_syntax``, ~3 s of CPU at import) is deferred in every process that
renders a report and in every notebook kernel, and an IRI check still gives the real answer."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CODE = """
import sys
from memeval.analysis.report import setup_notebook
setup_notebook()  # the kernel side: plotly's renderers import nbformat, hence jsonschema
import jsonschema
assert "nbformat" in sys.modules and "jsonschema._format" in sys.modules
files = [getattr(m, "__file__", None) for m in list(sys.modules.values())]  # as hypothesis's pytest plugin does
print("grammar built before a check:", "rfc3987_syntax.syntax_helpers" in sys.modules)
check = jsonschema.Draft7Validator({"format": "iri"}, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
print("verdicts:", check.is_valid("http://example.com/caf\\u00e9"), check.is_valid("no scheme here"))
print("grammar built after a check:", "rfc3987_syntax.syntax_helpers" in sys.modules)
"""


def test_the_iri_grammar_is_built_on_first_check_only():
    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987_syntax is not installed here: jsonschema has no IRI grammar to defer")
    p = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "grammar built before a check: False",
        "verdicts: True False",  # the real grammar's answers: an IRI, then not one
        "grammar built after a check: True",
    ]
