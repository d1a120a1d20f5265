# Every target sets itself up: a virtualenv in .venv, dependencies from PyPI, and (with no
# MEMORY_DATABASE_URL) an embedded PostgreSQL + pgvector under .memory/.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
export MEMORY_DATA_DIR ?= $(CURDIR)/.memory

.PHONY: setup browser demo chat serve test eval bench lint db-stop clean typescript-types

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

demo: setup
	$(VENV)/bin/engram demo

# Talk to an OpenAI-compatible server: make chat BASE_URL=http://localhost:11434/v1 MODEL=llama3.2
# (CHAT_USER, CHAT and EXPLAIN=1 optional; without BASE_URL, OpenAI with MEMORY_LLM_API_KEY).
chat: setup
	MEMORY_LLM=openai $(if $(BASE_URL),MEMORY_LLM_BASE_URL=$(BASE_URL)) \
	$(if $(MODEL),MEMORY_LLM_MODEL=$(MODEL)) $(VENV)/bin/engram chat \
	--user $(or $(CHAT_USER),me) --chat $(or $(CHAT),default) $(if $(EXPLAIN),--explain)

# The HTTP API on the embedded database, on 127.0.0.1 (PORT, default 8000), with a new
# admin key of tenant "local" printed first (docs at http://127.0.0.1:8000/docs).
serve: setup
	@echo "local key (tenant local, admin): $$($(VENV)/bin/engram keys create --tenant local --scope admin 2>/dev/null)"
	$(VENV)/bin/engram serve --local --host 127.0.0.1 --port $(or $(PORT),8000)

# The inspector's browser tests drive Debian's Chromium (never a browser download); the
# TypeScript client's tests install its locked npm packages themselves.
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
		(apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

test: setup browser
	$(PY) -m pytest

eval: setup
	$(PY) -m engrammar.evals $(if $(LLM),--llm $(LLM))

bench: setup
	$(PY) -m bench

lint: setup
	$(VENV)/bin/ruff check engrammar bench tests examples
	$(VENV)/bin/mypy

# The TypeScript client's OpenAPI document and types, from the service as it is now
# (tests/test_typescript.py fails while either is stale).
typescript-types: setup
	cd clients/typescript && npm ci --no-audit --no-fund --silent
	$(PY) clients/typescript/scripts/openapi.py > clients/typescript/openapi.json
	cd clients/typescript && npm run --silent generate

db-stop: setup
	$(VENV)/bin/engram db stop

clean: db-stop
	rm -rf .memory
