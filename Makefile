# The two commands of the README: `make book` and `make test`. Each creates or updates the
# local virtual environment (.venv) when pyproject.toml changed, then does its job.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.treebook-installed
export MPLBACKEND := Agg
export PYTHONHASHSEED := 0

.PHONY: book test venv clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test,dist]'
	@touch $(STAMP)

venv: $(STAMP)

book: $(STAMP)
	$(BIN)/treebook book

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -n 2 --durations=15 -q

clean:
	rm -rf _build .pytest_cache .hypothesis
