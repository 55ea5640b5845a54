# The two commands of the README: `make demo` and `make test`. Both set everything up themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "argo-why needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

demo: $(STAMP)
	$(BIN)/argo-why demo

test: $(STAMP)
	@scripts/ensure-tools.sh jq redis-server
	$(BIN)/ruff check bot handlers tests bench
	$(BIN)/ruff format --check bot handlers tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest

bench: $(STAMP)
	@scripts/ensure-tools.sh redis-server
	$(BIN)/python bench/analysis.py --resources 2000
	$(BIN)/python bench/why.py --resources 500
	$(BIN)/python bench/intake.py
	$(BIN)/python bench/pr.py
	$(BIN)/python bench/storm.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
