# Fixbase: `make run` serves it on its embedded default; `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLES := $(wildcard ../shared/samples) samples
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
REDIS_DEFAULT ?= redis://127.0.0.1:6379/15

.PHONY: install run test test-fast lint format bench evaluate fit-ranker bless clean

$(STAMP): requirements.txt requirements-dev.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements-dev.txt
	$(BIN)/python manage.py prepare_model
	touch $(STAMP)

install: $(STAMP)

# A sample that fails to ingest is reported but does not stop the server from starting.
run: install
	$(BIN)/python manage.py migrate -v0
	$(BIN)/python manage.py load_pack
	$(BIN)/python manage.py reread_entries --if-changed
	-$(BIN)/python manage.py ingest $(SAMPLES)
	$(BIN)/python manage.py ensure_admin
	$(BIN)/python manage.py runserver 127.0.0.1:8000

# The suite runs on PostgreSQL and real Redis when they answer on their usual ports; under
# CI=true they must answer. Browser tests drive Debian's Chromium (installed here if missing).
test: install
	@bash scripts/ensure-chromium.sh
	@source scripts/test-env.sh && $(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: install
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Grouped cross-validation by problem on dev, dev-long, train, train-long (../shared/bench).
evaluate: install
	$(BIN)/python bench/grouped_cv.py --curve

# The same, then fit on everything and write triage/ranker_weights.json.
fit-ranker: install
	$(BIN)/python bench/grouped_cv.py --write

bench: install
	$(BIN)/python bench/triage_latency.py

bless: install
	$(BIN)/python -m tests.bless

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
