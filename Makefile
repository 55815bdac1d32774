# Quick start: `make demo` runs FGM on embedded data; `make test` runs the test suite.
# Both create .venv and install what they need on first use, then compile the
# numba code once (python -m kernlearn._precompile) so no fit compiles.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test
DEMO_STAMP := $(VENV)/.installed-plot
PRECOMPILED := $(VENV)/.precompiled
SOURCES := $(shell find src/kernlearn -name '*.py')

.PHONY: demo test bench install precompile browser reliability clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -e ".[test]"
	touch $(STAMP) $(DEMO_STAMP)

# The demo needs the library and matplotlib only, not the test extra.
$(DEMO_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -e ".[plot]"
	touch $(DEMO_STAMP)

# Compile every numba function into its on-disk cache (tens of seconds once;
# about a second when current).  Redone when a source file changes, because
# numba drops a function's cache when its file changes.
$(PRECOMPILED): $(DEMO_STAMP) $(SOURCES)
	$(BIN)/python -m kernlearn._precompile
	touch $(PRECOMPILED)

precompile: $(PRECOMPILED)

install: $(STAMP) $(PRECOMPILED)

demo: $(DEMO_STAMP) $(PRECOMPILED)
	$(BIN)/kernlearn demo

# Headless Chromium for the report test (tests/test_report.py): installed with
# apt-get when missing and we are root (CI); otherwise that test skips, saying why.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || command -v google-chrome >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing chromium for the report test"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "note: no chromium and cannot install it; the report browser test will skip"; fi

test: $(STAMP) $(PRECOMPILED) browser
	$(BIN)/python -m pytest -n 2 -q

# Rewrite RELIABILITY.md by running the bad-input matrix through real subprocesses.
reliability: $(STAMP)
	$(BIN)/python scripts/reliability.py

bench: $(STAMP)
	$(BIN)/python -m pip install -e ".[benchmark]"
	@echo "run scripts under benchmarks/, e.g. $(BIN)/python benchmarks/fgm_vs_l1.py"

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
