# One command to run the dashboard, one to run the tests (see README.md; the rest: docs/, `make docs`).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8501
# The dashboard has no authentication: loopback only unless DASHBOARD_HOST says otherwise (docs/dashboard.md: the proxy section).
DASHBOARD_HOST ?= 127.0.0.1

.PHONY: install install-dev run demo test test-all lint docs bench bench-targets bench-breakdown fuzz clean

$(VENV)/.installed: requirements.txt pyproject.toml setup.py
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

# As `hudi-inspect ui` serves it (hudi_core/cli/ui.py, streamlit_argv): loopback, no usage statistics sent, no
# "Deploy" button or developer menu.
run: install
	$(VENV)/bin/streamlit run app.py --server.address $(DASHBOARD_HOST) --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false --client.toolbarMode minimal

# A writer plays the HUDI-7779 scenario into a new folder under the inspector's cache
# (demo-live/<time>) while the dashboard follows it live; the URL with ?follow=1 is printed, the writer starts
# START seconds later, one step every INTERVAL seconds. GUARD=off: the writer archives without the HUDI-7779 guard
# and the alerts plan archival without it (the exposure alert). Ctrl-C stops both. docs/dashboard.md: "Presenting the guards live".
INTERVAL ?= 5
GUARD ?= on
START ?= 10
demo: install
	$(PY) -m hudi_core.dashboard.demo_live --interval $(INTERVAL) --guard $(GUARD) --start-delay $(START) \
		--port $(PORT) --host $(DASHBOARD_HOST)

# The fast tier: every module's logic, fixture tables included; no browser, object store or Spark cluster.
test: install-dev
	$(VENV)/bin/ruff check .
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m pytest -q -m "not integration"

# Everything, the integration tier too (Chromium, S3/GCS/Azure emulators, Spark standalone): what CI runs.
test-all: install-dev
	$(VENV)/bin/ruff check .
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m pytest -q

# Style, types (pyproject's [tool.mypy]) and dead code in the shipped code; tools/vulture_whitelist.py lists the
# names vulture cannot see used (called by name, read by serialisation, used only by tests).
lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy hudi_core
	$(VENV)/bin/vulture hudi_core pages app.py tools/vulture_whitelist.py --min-confidence 60

# The documentation site (mkdocs.yml, docs/): the CLI's option lists regenerated from its parser, then built
# into site/ (gitignored); --strict fails on a broken link or a page missing from the nav.
docs: install-dev
	$(PY) docs/gen_reference.py
	$(VENV)/bin/mkdocs build --strict

# What users wait for: every command as a whole process next to hudi-rs and the I/O
# floor, on local disk and on the loopback S3 server (20 ms a request), plus the dashboard in Chromium.
# L (1M files, 10k active + 1M archived instants; generated once into ~/.cache/hudi-inspector/bench: ~20 min for
# layout 1, ~10 min for layout 2 on 2 cores, 3.3 + 1.0 GB) runs one round (--l-rounds).
# `make bench BENCH_ARGS="--sizes S,M --s3 M --dashboard M"` leaves L out.
BENCH_ARGS ?= --sizes S,M,L --layouts 1,2 --rounds 3 --l-rounds 1 --s3 M --dashboard M,L --dashboard-pages overview,cleaner
bench: install-dev
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m bench.commands $(BENCH_ARGS)

# The big-table targets judged in one run: first runs on M and L against the floor (and L's peak memory), fsview
# and timeline against hudi-rs, the Overview in Chromium, the Spark driver's memory; a Markdown table of
# measured / reference / met (bench/results/targets-*.json). About 30 minutes once L is generated.
TARGETS_ARGS ?= --sizes M,L --layouts 1,2 --dashboard --spark
bench-targets: install-dev
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m bench.targets $(TARGETS_ARGS)

# The stage breakdown inside one warm process (engines local / spark), never the headline.
bench-breakdown: install-dev
	PYSPARK_PYTHON=$(abspath $(PY)) $(PY) -m bench $(BREAKDOWN_ARGS)

# The parser fuzz targets (tests/formats/test_fuzz.py) with a long budget; `make test` runs them with a
# small fixed one. FUZZ_PROFILE=fuzz (3000 examples per target, random); crashes become regression tests.
FUZZ_PROFILE ?= fuzz
fuzz: install-dev
	HUDI_FUZZ_PROFILE=$(FUZZ_PROFILE) $(PY) -m pytest -q tests/formats/test_fuzz.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
