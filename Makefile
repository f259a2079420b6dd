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
	@touch $(STAMP)

# The checkout as a path entry of the venv (as `setup.py develop` made it).  setuptools'
# editable install imports through a finder that Python consults after its path finder, so a
# folder named like a package (fmus/, hil/...) beside a user's script became an empty
# namespace package that hid the real one; on sys.path the real (regular) package wins.
$(CHECKOUT): $(STAMP) Makefile
	$(BIN)/python -c "import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], \
	  '_cosim_checkout.pth').write_text(pathlib.Path('$(CURDIR)').as_posix() + '\n')"
	@touch $(CHECKOUT)

venv: $(CHECKOUT)

demo: $(CHECKOUT)
	$(BIN)/python examples/flagship.py --out out/demo

lint: $(CHECKOUT)
	$(BIN)/ruff check cosim blocks fmus hil examples tests bench

test: $(CHECKOUT) lint
	$(BIN)/python -m pytest -q

bench: $(CHECKOUT)
	$(BIN)/python -m bench all --json out/bench/all.json

docs: $(CHECKOUT)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf out build *.egg-info
