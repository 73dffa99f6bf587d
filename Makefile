# Two commands do everything on a fresh machine: `make plan` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STACK ?= dev

.PHONY: plan test tools bench clean

$(BIN)/gpu-platform: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

plan: $(BIN)/gpu-platform  ## offline plan of a stack: resources, policy verdict, capacity and cost
	$(BIN)/gpu-platform plan --stack $(STACK)

tools:  ## promtool and amtool for the alert tests: apt-get installs them where it may (see .ci/install-tools)
	@.ci/install-tools

test: $(BIN)/gpu-platform tools  ## the whole test suite; ends with what was skipped and why
	$(BIN)/python -m pytest -rs

bench: $(BIN)/gpu-platform  ## plan timings (medians) against the import floor
	$(BIN)/python benchmarks/plan_bench.py

clean:
	rm -rf $(VENV) .pytest_cache
