# benchtape — the README's commands. `make demo` sets everything up and runs the demo.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench fuzz install clean docs

$(BIN)/benchtape: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $(BIN)/benchtape

install: $(BIN)/benchtape

demo: install
	$(BIN)/benchtape demo

test: install
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup

bench: install
	$(BIN)/python benchmarks/store_append.py
	$(BIN)/python benchmarks/regrade_query.py
	$(BIN)/python benchmarks/snapshot_restore.py

docs: install
	$(BIN)/python -m checks.docs > docs/checks.md

clean:
	rm -rf $(VENV) .benchtape .pytest_cache build *.egg-info

# A long fuzz run (hypothesis-generated bench files, transcript lines and snapshot tars, each in a
# bounded worker): prints inputs, tracebacks, hangs and peak memory. FUZZ_INPUTS per kind; FUZZ_SEED.
FUZZ_INPUTS ?= 2000
fuzz: install
	$(BIN)/python tests/fuzz/run_fuzz.py --inputs $(FUZZ_INPUTS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))
