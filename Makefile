# Everything a fresh machine needs comes from here: `make serve` and `make test` install what they use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8001

.PHONY: serve test install lint typecheck check migrate clean bench bench-tools browser-tools screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `make serve` installs what the server runs, nothing more (a production install: idle RSS in docs/benchmarks.md);
# `make test` and `make install` add the development tools to the same .venv.
RUNTIME_STAMP := $(VENV)/.installed-runtime

$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME_STAMP)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUNTIME_STAMP)

install: $(STAMP)

serve: $(RUNTIME_STAMP)
	$(BIN)/controlplane serve --host $(HOST) --port $(PORT)

migrate: $(RUNTIME_STAMP)
	$(BIN)/controlplane migrate

# wrk drives the benchmarks (Debian's package); the smoke run in the test suite needs it too.
bench-tools:
	@command -v wrk >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq >/dev/null && apt-get install -y -qq wrk >/dev/null; \
	  else echo "make: wrk is missing and cannot be installed here (needs apt-get as root)" >&2; fi; }

# Debian's chromium: the dashboard's browser test drives it with Playwright (no browser download).
browser-tools:
	@command -v chromium >/dev/null 2>&1 || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null; \
	  else echo "make: chromium is missing and cannot be installed here (needs apt-get as root)" >&2; fi; }

# Four test processes (pytest-xdist), on two cores too: most tests wait on a database, a server process or a socket
# (the suite keeps ~1.7 cores busy with four), and each process has its own Postgres database and SQLite files.
# PYTEST_WORKERS=0 runs them in this process.
PYTEST_WORKERS ?= 4

test: $(STAMP) bench-tools browser-tools
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --durations=25 $(PYTEST_ARGS)

# The console's screenshots in docs/screenshots/dashboard/ (docs/dashboard.md shows them): its browser tests, run
# with their screenshots kept there.
screenshots: $(STAMP) browser-tools
	CONTROLPLANE_TEST_ARTIFACTS=docs/screenshots $(BIN)/python -m pytest -q -n 0 tests/e2e/test_dashboard.py

bench: $(STAMP) bench-tools
	$(BIN)/python -m benchmarks.run $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
