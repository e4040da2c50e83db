# Two commands: `make report` and `make test`. Both create/reuse .venv.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test report venv clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	$(BIN)/python -m ipykernel install --prefix $(VENV) --name python3 >/dev/null
	@touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check memeval tests benchmarks notebooks examples
	$(BIN)/ruff format --check memeval tests benchmarks notebooks examples
	$(BIN)/mypy
	$(BIN)/python -m pytest

report: $(STAMP)
	$(BIN)/memeval report notebooks/degradation.ipynb -o reports/degradation.html

clean:
	rm -rf $(VENV) reports/*.html runs
