# Every target is self-sufficient on a fresh machine: it creates .venv and installs the project first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SHARED ?= ../shared

.PHONY: demo test lint fuzz bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/verified-indexing demo --spec $(SHARED)/spec/xla-indexing-analysis.md --hlo examples/jax_hlo --more-hlo examples/hlo

lint: $(VENV)/.installed
	$(PY) -m ruff check verified_indexing proofs tests benchmarks
	$(PY) -m mypy

test: $(VENV)/.installed lint
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -q -p no:cacheprovider

fuzz: $(VENV)/.installed
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q -p no:cacheprovider tests

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[bench]'
	@for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
