# Every target is self-sufficient on a fresh machine: it creates .venv and installs the project first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
SHARED ?= ../shared

.PHONY: demo test lint fuzz bench clean floor-check

# Quiet (-qq: errors only), so that `make demo` prints the demo's checks and little else.
# The demo needs the core only (z3-solver, islpy, tqdm); the tests install the test tools and the live compilers
# (jax, apache-tvm, iree-base-compiler: the tests that drive them skip cleanly where they are absent).
$(VENV)/.core: pyproject.toml
	@echo "make: installing the project into $(VENV) (once)"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -qq --upgrade pip
	@$(PY) -m pip install -qq -e .
	@touch $@

$(VENV)/.installed: $(VENV)/.core
	@echo "make: installing the test tools and the live compilers into $(VENV) (once; a few minutes)"
	@$(PY) -m pip install -qq -e '.[test,dev,tvm,mlir]'
	@touch $@

demo: $(VENV)/.core
	@$(VENV)/bin/verified-indexing demo --spec $(SHARED)/spec/xla-indexing-analysis.md

lint: $(VENV)/.installed
	$(PY) -m ruff check verified_indexing proofs tests benchmarks fuzz
	$(PY) -m mypy

test: $(VENV)/.installed lint
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -q -p no:cacheprovider

# The differential campaign: FUZZ_CHECKS per area, seeded, resumable (FUZZ_RESUME=--resume), on FUZZ_JOBS processes
# (FUZZ_BACKEND=ray: on Ray, a cluster when RAY_ADDRESS is set); FUZZ_AREAS: a comma-separated subset.
FUZZ_CHECKS ?= 1000
FUZZ_JOBS ?= 2
FUZZ_SEED ?= 0
FUZZ_RESUME ?=
FUZZ_BACKEND ?= process
FUZZ_AREAS ?= equal,simplify,rule,cli,hlo,legality,coalescing,tvm,mlir

fuzz: $(VENV)/.installed
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q -p no:cacheprovider tests
	$(PY) fuzz/campaign.py --checks $(FUZZ_CHECKS) --jobs $(FUZZ_JOBS) --seed $(FUZZ_SEED) --out fuzz-out \
		--backend $(FUZZ_BACKEND) --areas $(FUZZ_AREAS) $(FUZZ_RESUME)

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[bench]'
	@for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# The rule proofs and the known-bugs corpus at the lowest z3 the package accepts (pyproject: z3-solver>=5):
# a venv of its own under build/ holding only z3-solver==FLOOR_Z3 (other packages: $(VENV)), this checkout on PYTHONPATH.
FLOOR_Z3 ?= 5.0.0.0

floor-check: $(VENV)/.installed
	$(PY) tests/floor_check.py --z3 $(FLOOR_Z3) --venv build/floor-venv

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache fuzz-out
