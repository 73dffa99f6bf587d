# Two commands do everything on a fresh machine: `make plan` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STACK ?= dev

.PHONY: plan test bench clean

$(BIN)/gpu-platform: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

plan: $(BIN)/gpu-platform  ## offline plan of a stack: resources, policy verdict, capacity and cost
	$(BIN)/gpu-platform plan --stack $(STACK)

test: $(BIN)/gpu-platform  ## the whole test suite (promtool and amtool come from Debian's prometheus packages)
	@command -v promtool >/dev/null || echo "note: promtool missing; install Debian's 'prometheus' package to run the alert-rule tests"
	@command -v amtool >/dev/null || echo "note: amtool missing; install Debian's 'prometheus-alertmanager' package to run the alert-routing tests"
	$(BIN)/python -m pytest

bench: $(BIN)/gpu-platform  ## plan timings (medians) against the import floor
	$(BIN)/python benchmarks/plan_bench.py

clean:
	rm -rf $(VENV) .pytest_cache
