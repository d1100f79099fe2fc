# One command to run the dashboard, one to run the tests (see README).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8501

.PHONY: install install-dev run test lint bench fuzz clean

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements.txt
	$(PIP) install --quiet --no-deps -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

run: install
	$(VENV)/bin/streamlit run app.py --server.port $(PORT) --server.headless true

test: install-dev
	$(VENV)/bin/ruff check .
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m pytest -q

lint: install-dev
	$(VENV)/bin/ruff check .

# `make bench BENCH_ARGS="--sizes fixtures,S,M,L"` for the full run (L tables take minutes to generate).
bench: install-dev
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m bench $(BENCH_ARGS)

# Issue 16: the parser fuzz targets (tests/test_fuzz.py) with a long budget; `make test` runs them with a
# small fixed one. FUZZ_PROFILE=fuzz (3000 examples per target, random); crashes become regression tests.
FUZZ_PROFILE ?= fuzz
fuzz: install-dev
	HUDI_FUZZ_PROFILE=$(FUZZ_PROFILE) $(PY) -m pytest -q tests/test_fuzz.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
