# cosim: every target creates .venv in the repository root when missing.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean venv docs

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench,docs]'
	@command -v dot >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	  { apt-get install -y -qq graphviz >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq graphviz >/dev/null 2>&1; }; }; } \
	  || echo "note: Graphviz 'dot' not installed: SVG diagram views and their tests are skipped"
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/flagship.py --out out/demo

lint: $(STAMP)
	$(BIN)/ruff check cosim blocks fmus hil examples tests bench

test: $(STAMP) lint
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench all --json out/bench/all.json

docs: $(STAMP)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf out build *.egg-info
