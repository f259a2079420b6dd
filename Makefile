# cosim: every target creates .venv in the repository root when missing.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHECKOUT := $(VENV)/.checkout-on-path

.PHONY: demo test bench lint clean venv docs

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench,docs]'
	@command -v dot >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	  { apt-get install -y -qq graphviz >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq graphviz >/dev/null 2>&1; }; }; } \
	  || echo "note: Graphviz 'dot' not installed: SVG diagram views and their tests are skipped"
	@command -v chromium >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	  { apt-get install -y -qq chromium >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; }; }; } \
	  || echo "note: Chromium not installed: the HIL report's headless-browser test is skipped"
	@touch $(STAMP)

# The clone's packages found as an installed copy is, whatever folders a user's script has
# beside it (cosim/_checkout.py says why: issue 31), by a start-up line in the venv.
$(CHECKOUT): $(STAMP) Makefile cosim/_checkout.py
	$(BIN)/python -c "import pathlib, sysconfig; root = pathlib.Path('$(CURDIR)').as_posix(); \
	  pathlib.Path(sysconfig.get_paths()['purelib'], '_cosim_checkout.pth').write_text( \
	  'import importlib.util as u; s = u.spec_from_file_location(\"_cosim_checkout\", ' \
	  f'\"{root}/cosim/_checkout.py\"); m = u.module_from_spec(s); s.loader.exec_module(m); ' \
	  f'm.install(\"{root}\")\n')"
	@touch $(CHECKOUT)

venv: $(CHECKOUT)

demo: $(CHECKOUT)
	$(BIN)/python examples/flagship.py --out out/demo

lint: $(CHECKOUT)
	$(BIN)/ruff check cosim blocks fmus hil examples tests bench

# The tests that do not depend on the wall clock on every core (pytest-xdist; TEST_JOBS=0
# runs them in this process; a file's tests stay in one process: its fixtures are made once),
# then the `timing` tests alone, one at a time, so that their
# real-time runs share the machine with nothing of ours.  Both phases always run; the
# target fails if either did.  The testpaths (pyproject.toml) include examples/hil_tests:
# the ACC HIL test cases on their default rig, the virtual one (no wall clock).
TEST_JOBS ?= auto
test: $(CHECKOUT) lint
	@rc=0; \
	$(BIN)/python -m pytest -q -m "not timing" -n $(TEST_JOBS) --dist loadfile || rc=$$?; \
	$(BIN)/python -m pytest -q -m timing || rc=$$?; \
	exit $$rc

bench: $(CHECKOUT)
	$(BIN)/python -m bench all --json out/bench/all.json

docs: $(CHECKOUT)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf out build *.egg-info
