# Quick start: `make demo` runs FGM on embedded data; `make test` runs the test suite.
# Both create .venv and install what they need on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test

.PHONY: demo test bench install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/kernlearn demo

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	$(BIN)/python -m pip install -e ".[benchmark]"
	@echo "run scripts under benchmarks/, e.g. $(BIN)/python benchmarks/fgm_vs_l1.py"

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
