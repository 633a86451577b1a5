# Memory Lane: `make run` starts everything, `make test` runs the suite. Both set themselves up.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test install chromium node-deps agent-clients lint format bench clean-data client docs

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) -m memorylane.runner

# Tests get their own data directory: their own embedded PostgreSQL and broker queue, so a
# `make run` beside them never takes their tasks.
TEST_HOME ?= $(CURDIR)/.memorylane/test

# The dashboard's browser tests drive Debian's Chromium (never `playwright install`).
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# The OpenCode plugin's dev dependencies (TypeScript, the plugin API types), for its tests. npm install,
# not npm ci: npm 11 reports lock files with optional per-platform packages as out of sync.
OPENCODE := clients/opencode
$(OPENCODE)/node_modules/.package-lock.json: $(OPENCODE)/package-lock.json
	cd $(OPENCODE) && npm install --no-audit --no-fund --loglevel=error && touch node_modules/.package-lock.json

# The real agent clients the integration tests drive (Claude Code and OpenCode, pinned in
# clients/agents/package.json; about 700 MB, installed once).
AGENTS := clients/agents
$(AGENTS)/node_modules/.package-lock.json: $(AGENTS)/package-lock.json
	cd $(AGENTS) && npm install --no-audit --no-fund --loglevel=error && touch node_modules/.package-lock.json

agent-clients: $(AGENTS)/node_modules/.package-lock.json

node-deps: $(OPENCODE)/node_modules/.package-lock.json

test: $(STAMP) chromium node-deps agent-clients
	MEMORYLANE_HOME=$(TEST_HOME) $(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: $(STAMP)
	$(PY) -m bench.retrieval bench/data/memorylane.jsonl
	$(PY) -m bench.latency --memories 10000
	$(PY) -m bench.pipeline

# The memlane client's wheel (standard library only) in dist/, for teammates who do not run the server:
# `pipx install dist/memlane-*.whl`. Needs only setuptools (the venv's when there is one, not the
# server's dependencies); the build's scratch folders are removed after.
CLIENT_PY := $(if $(wildcard $(PY)),$(PY),$(PYTHON))
client:
	$(CLIENT_PY) -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist ./clients
	rm -rf clients/build clients/memlane.egg-info
	@ls dist/memlane-*.whl

# The docs site in site/ (mkdocs-material; the configuration reference is generated from the settings).
# Strict: a broken link or anchor, a page left out of the nav or an undescribed setting fails it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

clean-data:
	$(PY) -m memorylane.embedded stop || true
	rm -rf .memorylane
