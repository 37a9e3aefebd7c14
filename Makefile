# The two commands of the README: `make demo` and `make test`. Both create the
# virtual environment on first use, so a fresh machine needs only Python and pip.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CKSUM := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
STAMP := $(VENV)/.installed-$(CKSUM)
# the demo's own install: the package with LightGBM and XGBoost, not the panels, tests and docs
# (half the install's time on a fresh machine); `make test` and the others add the rest
DEMO_STAMP := $(VENV)/.demo-installed-$(CKSUM)
PYTEST_ARGS ?=

.PHONY: compile demo test test-fast lint format docs lab bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e '.[all,test,docs,lint]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

$(DEMO_STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e '.[lightgbm,xgboost]'
	rm -f $(VENV)/.demo-installed-*
	touch $(DEMO_STAMP)

# numba compiles each kernel on its first call and caches it (__pycache__ next to the
# sources, or NUMBA_CACHE_DIR); `make compile` fills the cache once, with a progress bar,
# so the demo's timings and the tests that follow load the kernels instead of compiling them
compile: $(STAMP)
	$(PY) -m bandit_tree_tools compile

demo: $(DEMO_STAMP)
	$(PY) -m bandit_tree_tools compile
	$(PY) -m bandit_tree_tools demo

test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# the lane for working: everything but the browser and the slow tests (CONTRIBUTING.md)
test-fast: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadgroup -m "not slow and not browser" $(PYTEST_ARGS)

# ruff (lint and format check) and mypy on the format and the adapters; .ci/run runs it
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# the site, into docs/_build/html; warnings (broken references included) fail
# the build. The tour notebooks are executed, with their outputs cached in
# docs/_build/.jupyter_cache (a notebook re-runs only when its code changed).
docs: $(STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	@echo "open docs/_build/html/index.html"

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) build dist .pytest_cache docs/_build docs/api/generated
