# The two commands of the README: `make demo` and `make test`. Both create the
# virtual environment on first use, so a fresh machine needs only Python and pip.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
PYTEST_ARGS ?=

.PHONY: demo test lab bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e '.[all,test]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m bandit_tree_tools demo

test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks

bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) build dist .pytest_cache
