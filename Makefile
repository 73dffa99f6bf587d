# Two commands do everything on a fresh machine: `make plan` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STACK ?= dev
API_DIR ?= build/api

# The API reference covers the package and each of its layers (facts/, spec/, ..., platform.py). They are
# named one by one because pdoc follows a package's __all__, and gpu_platform's lists its public names,
# not its layers; '!gpu_platform\.' drops what `gpu_platform` itself added, so no page is made twice.
API_LAYERS := $(patsubst components/%/__init__.py,%,$(wildcard components/gpu_platform/*/__init__.py)) \
              $(patsubst components/%.py,%,$(filter-out %/__init__.py,$(wildcard components/gpu_platform/*.py)))
API_MODULES := gpu_platform '!gpu_platform\.' $(sort $(subst /,.,$(API_LAYERS)))

.PHONY: plan test tools api-docs bench clean

$(BIN)/gpu-platform: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[program,dev]'
	@touch $@

plan: $(BIN)/gpu-platform  ## offline plan of a stack: resources, policy verdict, capacity and cost
	$(BIN)/gpu-platform plan --stack $(STACK)

tools:  ## promtool and amtool for the alert tests: apt-get installs them where it may (see .ci/install-tools)
	@.ci/install-tools

# The suite runs on every core (pytest-xdist), a test file per worker at a time so each file's fixtures
# (plans, wheels, virtualenvs) are built once, counting tests as they pass; then the tests marked `serial`
# (wall-clock bounds) run alone. TEST_WORKERS=0 runs everything in this process.
TEST_WORKERS ?= auto
PYTEST_PROGRESS := -rs -o console_output_style=count --durations=5

test: $(BIN)/gpu-platform tools  ## the whole test suite, in parallel; ends with what was skipped and why
	$(BIN)/python -m pytest $(PYTEST_PROGRESS) -n $(TEST_WORKERS) --dist loadfile -m "not serial"
	$(BIN)/python -m pytest $(PYTEST_PROGRESS) -p no:xdist -m serial

api-docs: $(BIN)/gpu-platform  ## the API reference, from the docstrings: $(API_DIR)/index.html
	rm -rf $(API_DIR)
	$(BIN)/python -m pdoc --output-directory $(API_DIR) $(API_MODULES)
	@echo "API reference: $(API_DIR)/index.html (pdoc's warnings on pulumi.Input annotations are expected: it"
	@echo "cannot resolve the Output[T] inside pulumi's Input alias, so it shows those annotations as written)"

bench: $(BIN)/gpu-platform  ## plan CPU time against the import and bare-engine floors (dev, prod, ~2.5k, ~10k resources)
	$(BIN)/python benchmarks/plan_bench.py

clean:
	rm -rf $(VENV) .pytest_cache $(API_DIR)
