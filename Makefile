# DRA Planner developer commands (GNU make). `make run` / `make test` work on a
# fresh machine: they create the virtualenv and install what is missing.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON3 ?= python3
VENV ?= .venv
PY = $(VENV)/bin/python
STAMP = $(VENV)/.installed
CHROMIUM ?= /usr/bin/chromium
HOST ?= 127.0.0.1
PORT ?= 8000
# pytest processes (pytest-xdist): two on the embedded defaults, where each has its own
# SQLite database and in-memory channel layer; one (-n 0) against a real Redis, whose task
# queue and channel groups two processes would share (docs/development/README.md, "Tests").
PYTEST_WORKERS ?= $(if $(REDIS_URL),0,2)

.PHONY: help install bytecode browser run test lint bench clean

help:
	@echo "make run     create $(VENV), install, migrate, load the demo cluster, serve http://$(HOST):$(PORT)"
	@echo "make test    ruff, import contracts, Django checks, migrations check, pytest (incl. headless Chromium tests)"
	@echo "make bench   run every bench/bench_*.py"
	@echo "make lint    ruff check"
	@echo "make clean   remove $(VENV), db.sqlite3 and caches"

install: $(STAMP)

# Re-install whenever pyproject.toml changes.
$(STAMP): pyproject.toml
	$(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev,scale]'
	touch $@

# The project's own bytecode. pip compiles what it installs, but not an editable project, and
# where PYTHONDONTWRITEBYTECODE is set (as on the project's machines) every process would
# compile each of its modules again: about 0.3 CPU-s of each `simulate`'s start
# (docs/development/README.md, "Start-up"). compileall skips what is up to date.
bytecode: $(STAMP)
	$(PY) -m compileall -q -j 0 allocation clusters console scenarios bench manage.py >/dev/null

# Debian's Chromium for the Playwright browser tests (Playwright's own download is not used).
browser:
	@if [ -x "$(CHROMIUM)" ]; then \
		echo "chromium: $(CHROMIUM) present"; \
	else \
		if [ "$$(id -u)" -eq 0 ]; then SUDO=; \
		elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
		else echo "error: $(CHROMIUM) is missing and installing it needs root (or sudo)" >&2; exit 1; fi; \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium && \
		test -x "$(CHROMIUM)"; \
	fi

run: $(STAMP) bytecode
	$(PY) manage.py migrate --noinput
	$(PY) manage.py loaddemo
	$(PY) manage.py runserver $(HOST):$(PORT)

test: $(STAMP) bytecode browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/pytest -n $(PYTEST_WORKERS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP) bytecode
	$(PY) -m bench

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .ruff_cache .hypothesis build *.egg-info staticfiles
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
