# Everything a newcomer needs: `make run` (the service on SQLite) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test test-fast test-fast-3.12 lint system-deps node-deps harbor-deps import-deps perf clean

# Without the venv module (Debian's python3 lacks it unless python3-venv is installed), virtualenv from PyPI.
$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV) || { $(PYTHON) -m pip install -q virtualenv && $(PYTHON) -m virtualenv -q $(VENV); }
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev: pyproject.toml $(VENV)/.runtime
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

## run: install and start the service on the embedded default (SQLite, 127.0.0.1:8000; make run PORT=9000)
HOST ?= 127.0.0.1
PORT ?= 8000
run: $(VENV)/.runtime
	$(BIN)/bountyboard serve --host $(HOST) --port $(PORT)

## system-deps: Debian packages the tests drive (Chromium for the browser tests, bubblewrap for the checks sandbox)
system-deps:
	./scripts/system-deps.sh

## node-deps: the TypeScript client package (clients/typescript), its compilers and generator, newman and pyright, from package-lock.json
node-deps:
	./scripts/node-deps.sh

## harbor-deps: Harbor 0.25 in its own Python 3.12 virtualenv (.venv-harbor), for the bench tests
harbor-deps:
	./scripts/harbor.sh

## import-deps: the readers of bench push's imports: Inspect AI and lm-eval in .venv, Every Eval Ever (Python 3.12) in .venv-eee
import-deps: $(VENV)/.dev
	./scripts/import-deps.sh

## test: install everything and run the whole suite, fast tier then live tier (SQLite always, PostgreSQL when reachable)
# (the tiers are pytest marks set in tests/conftest.py: a failing fast tier stops make before the live tier starts)
test: $(VENV)/.dev system-deps node-deps harbor-deps import-deps
	$(BIN)/pytest -m fast
	$(MAKE) test-fast-3.12
	$(BIN)/pytest -m "not fast"

## test-fast: the fast tier only (the app in process on SQLite: no live server, no PostgreSQL, no system packages; under a minute)
test-fast: $(VENV)/.dev
	$(BIN)/pytest -m fast

## test-fast-3.12: the fast tier again on Python 3.12 (in .venv-3.12): the project admits 3.11 and newer, and asyncio's
## scheduling differs between them where the service depends on it (sqlite_driver's writer turn)
test-fast-3.12:
	python=$$(bash -c 'source scripts/python312.sh && python_312 "The fast tier on 3.12" PYTHON312') \
	  && $(MAKE) test-fast VENV=.venv-3.12 PYTHON="$$python"

## lint: ruff, mypy, and the layers of the package as import contracts (lint-imports, [tool.importlinter] in pyproject.toml)
lint: $(VENV)/.dev
	$(BIN)/ruff check src tests perf
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

## perf: the benchmarks under perf/, each a ratio against a bare floor app run beside it (figures go to docs/performance.md)
perf: $(VENV)/.dev
	./scripts/perf-deps.sh
	$(BIN)/python -m perf

clean:
	rm -rf $(VENV) .venv-3.12 .venv-harbor .venv-eee .bountyboard .pytest_cache .mypy_cache .ruff_cache node_modules
