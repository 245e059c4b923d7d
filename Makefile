# benchtape — the README's commands. `make demo` sets everything up and runs the demo.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench fuzz install clean docs agents lint screenshots receivers

# A user's install is the package and its runtime dependencies (what `make demo` needs, ~100 MB);
# the test tools (pytest, Playwright, Ray, Inspect, ruff, mypy: ~800 MB more) come with `make test`
# and `make lint` only, through the `test` extra.
$(BIN)/benchtape: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	@touch $(BIN)/benchtape

TESTED := $(VENV)/.test-extras
$(TESTED): $(BIN)/benchtape pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	@touch $(TESTED)

# Bytecode, compiled as pip compiles an installed package: an editable install leaves it to the
# first import, which never writes it where PYTHONDONTWRITEBYTECODE is set (this machine, many
# container images), and then every command compiled each module it imports, every time
# (`benchtape sessions` 520 ms against 329). Up to date, this is a quick mtime check.
PACKAGES := benchtape core spec store tools sandbox envs adapters models checks recorder replay tasks formats view
# fixtures-red/ is testdata, not code benchtape imports: never compiled (a __pycache__ there would be staged)
install: $(BIN)/benchtape
	@$(BIN)/python -m compileall -q -j 0 $(PACKAGES) >/dev/null

demo: install
	$(BIN)/benchtape demo

# The real Claude Code, Codex, Gemini CLI, Qwen Code, opencode (npm), mini-swe-agent and aider (PyPI, a venv each) at the versions benchtape is verified with, into
# .benchtape/tools/<tool>/<version>/ (never `npm install -g`). The real-binary tests use them.
agents: install
	$(BIN)/benchtape tools install claude-code codex gemini-cli qwen-code opencode mini-swe-agent aider

# The field's own tools the format tests run for real, each in a venv of its own under
# .benchtape/venvs/ (their pins clash with benchtape's): Arize Phoenix (an OTLP receiver,
# tests/formats/phoenixkit.py) and Harbor 0.25 (which needs Python 3.12: PY312 names one), with
# PyPI's podman-compose: `harbor run -e podman` drives it where the docker compose v2 plugin,
# which no registry here ships, is missing (Debian's podman itself: apt-get install podman).
# (a pyenv shim named python3.12 exists where 3.12 is installed but not selected, and fails: each
# candidate is asked to run before it is taken)
PY312 ?= $(shell for p in $$(ls -d $$HOME/.pyenv/versions/3.12.*/bin/python3.12 2>/dev/null) $$(command -v python3.12 2>/dev/null); do "$$p" -c '' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
receivers: .benchtape/venvs/phoenix/bin/phoenix .benchtape/venvs/harbor/bin/harbor
.benchtape/venvs/phoenix/bin/phoenix:
	@test -n "$(PY312)" || { echo "make receivers: Phoenix and Harbor need a Python 3.12 (pyenv install 3.12, or PY312=/path/to/python3.12)"; exit 2; }
	$(PY312) -m venv .benchtape/venvs/phoenix
	.benchtape/venvs/phoenix/bin/pip install -q 'arize-phoenix==20.*'
.benchtape/venvs/harbor/bin/harbor:
	@test -n "$(PY312)" || { echo "make receivers: Harbor 0.25 needs a Python 3.12 (pyenv install 3.12, or PY312=/path/to/python3.12)"; exit 2; }
	$(PY312) -m venv .benchtape/venvs/harbor
	.benchtape/venvs/harbor/bin/pip install -q 'harbor==0.25.*' 'podman-compose>=1.1'

# Three workers on two cores: a quarter of a worker's time goes to waiting on processes it does
# not run itself (the Docker engine, podman, Ray's nodes, Chromium, a timeout under test), so
# with two the cores sat idle that long; with three they are busy (3% idle, measured: 1,007 s
# with two workers, 894 s with three, the same 3,038 tests; the suite is CPU-bound at three).
test: install $(TESTED)
	$(BIN)/python -m pytest -q -n 3 --dist loadgroup

# Every benchmark prints its own report; issue 16's figures (each beside its floor or target)
# are collected as they run and printed together at the end (a missed target does not stop the
# run: the table says MISSED, and `make bench` fails at the end).
FIGURES := $(shell mktemp -u /tmp/benchtape-figures.XXXXXX)
bench: export BENCHTAPE_BENCH_FIGURES = $(FIGURES)
bench: install $(TESTED)
	-$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/store_append.py
	-$(BIN)/python benchmarks/regrade_query.py
	$(BIN)/python benchmarks/adversarial.py
	-$(BIN)/python benchmarks/run_memory.py
	-$(BIN)/python benchmarks/real_overhead.py
	-$(BIN)/python benchmarks/store_import.py
	$(BIN)/python benchmarks/store_concurrency.py
	$(BIN)/python benchmarks/store_open.py
	$(BIN)/python benchmarks/compare.py
	$(BIN)/python benchmarks/judges.py
	$(BIN)/python benchmarks/snapshot_restore.py
	-$(BIN)/python benchmarks/transforms.py
	$(BIN)/python benchmarks/hardening.py
	-$(BIN)/python benchmarks/inspect_compare.py
	-$(BIN)/python benchmarks/view.py
	-$(BIN)/python benchmarks/scaleout.py
	-$(BIN)/python benchmarks/tasks.py
	-$(BIN)/python benchmarks/envs.py
	@$(BIN)/python benchmarks/figures.py; code=$$?; rm -f $(FIGURES); exit $$code

# ruff (the rule set in pyproject) over the code and tests; mypy over the namespace (default
# mode, core strict) through .ci/typecheck, which lays the package-dir mapping out for it
lint: install $(TESTED)
	$(BIN)/ruff check .
	.ci/typecheck

docs: install
	$(BIN)/python -m benchtape.checks.docs > docs/checks.md

# The README's pictures of `benchtape view` (docs/img/view-*.png), from stores recorded for real,
# in Debian's Chromium (apt-get install chromium).
screenshots: install $(TESTED)
	$(BIN)/python tests/viewer/screenshots.py docs/img

clean:
	rm -rf $(VENV) .benchtape .pytest_cache build *.egg-info
	find $(PACKAGES) fixtures-red -name __pycache__ -type d -prune -exec rm -rf {} +

# A long fuzz run (hypothesis-generated bench files, transcript lines and snapshot tars, hostile
# Harbor task folders and repositories, each in a bounded worker): prints inputs, tracebacks,
# hangs, escapes and peak memory. FUZZ_INPUTS per kind (task folders and repositories at most 300); FUZZ_SEED.
FUZZ_INPUTS ?= 2000
fuzz: install $(TESTED)
	$(BIN)/python tests/fuzz/run_fuzz.py --inputs $(FUZZ_INPUTS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))
