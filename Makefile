# Quick start: `make demo` runs FGM on embedded data; `make test` runs the test suite.
# Both create .venv and install what they need on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test
DEMO_STAMP := $(VENV)/.installed-plot

.PHONY: demo test bench install browser reliability clean

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

install: $(STAMP)

demo: $(DEMO_STAMP)
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

test: $(STAMP) browser
	$(BIN)/python -m pytest -n 2 -q

# Rewrite RELIABILITY.md by running the bad-input matrix through real subprocesses.
reliability: $(STAMP)
	$(BIN)/python scripts/reliability.py

bench: $(STAMP)
	$(BIN)/python -m pip install -e ".[benchmark]"
	@echo "run scripts under benchmarks/, e.g. $(BIN)/python benchmarks/fgm_vs_l1.py"

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
