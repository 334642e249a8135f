# The two commands of the README: `make book` and `make test`. Each creates or updates the
# local virtual environment (.venv) when pyproject.toml changed (and compiles the numba kernels into
# their on-disk cache, so that no process pays the compilation at its first fit), then does its job.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.treebook-installed
export PYTHONHASHSEED := 0

.PHONY: book test venv check-book clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test,dist,compare]'
	$(BIN)/python -m treebook.warmup --jobs 2
	@touch $(STAMP)

venv: $(STAMP)

book: $(STAMP)
	$(BIN)/treebook book

# Opens every page of the built book in headless Chromium (installed from Debian's packages when
# absent): fails on a MathJax error, a broken image, raw TeX or a resource loaded from outside.
check-book: $(STAMP)
	$(BIN)/python -m treebook.check_book --html _build/html --out _build/screenshots

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -n 2 --durations=15 -q

clean:
	rm -rf _build .pytest_cache .hypothesis
