# Every target sets itself up: a virtualenv in .venv, dependencies from PyPI, and (with no
# MEMORY_DATABASE_URL) an embedded PostgreSQL + pgvector under .memory/.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
export MEMORY_DATA_DIR ?= $(CURDIR)/.memory

.PHONY: setup demo test eval bench lint db-stop clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

demo: setup
	$(PY) examples/demo.py

test: setup
	$(PY) -m pytest

eval: setup
	$(PY) -m evals $(if $(LLM),--llm $(LLM))

bench: setup
	$(PY) -m bench

lint: setup
	$(VENV)/bin/ruff check memory jobs evals bench tests examples
	$(VENV)/bin/mypy

db-stop: setup
	$(VENV)/bin/memory db stop

clean: db-stop
	rm -rf .memory
