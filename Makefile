# One command to run the dashboard, one to run the tests (see README).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8501

.PHONY: install install-dev run test lint bench clean

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

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
