# Two commands: `make report` and `make test`. Both create/reuse .venv.
# Debian's python3.11 (a PGO/LTO build) when it can make a venv: the suite's own CPU ~12% under pyenv's
# default build (BENCHMARKS.md, round 8); else python3.11 on PATH. `make venv PY=...` chooses another.
PY ?= $(shell /usr/bin/python3.11 -c 'import ensurepip' >/dev/null 2>&1 && echo /usr/bin/python3.11 || echo python3.11)
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

# mypy runs beside pytest at the lowest CPU priority: it takes the cores only while pytest leaves them
# idle (tests waiting on servers, sockets, subprocesses), so it adds little to the wall time; its report
# follows pytest's, and either failing fails the target.
test: $(STAMP)
	$(BIN)/ruff check memeval tests benchmarks notebooks examples
	$(BIN)/ruff format --check memeval tests benchmarks notebooks examples
	@log=$$(mktemp); nice -n 19 $(BIN)/mypy >"$$log" 2>&1 & mypy=$$!; \
	echo "$(BIN)/python -m pytest  (and $(BIN)/mypy beside it, niced)"; \
	$(BIN)/python -m pytest; tests=$$?; \
	wait $$mypy; types=$$?; echo "$(BIN)/mypy"; cat "$$log"; rm -f "$$log"; \
	test $$tests -eq 0 && test $$types -eq 0

report: $(STAMP)
	$(BIN)/memeval report notebooks/degradation.ipynb -o reports/degradation.html

clean:
	rm -rf $(VENV) reports/*.html runs
