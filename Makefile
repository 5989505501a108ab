# topicmatch: the two commands are `make run` and `make test`; `make help` lists the rest.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# The virtualenv's interpreter: Python 3.11 or later, as pyspark 4.3 (the spark extra) needs.
# Unless PYTHON names one: python3 if it is recent enough, else the newest python3.1x that is.
NEW_ENOUGH := import sys; sys.exit(sys.version_info < (3, 11))
ifeq ($(origin PYTHON), undefined)
PYTHON := $(firstword $(foreach p,python3 python3.14 python3.13 python3.12 python3.11,\
	$(shell $(p) -c '$(NEW_ENOUGH)' >/dev/null 2>&1 && echo $(p))))
endif
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
WHEEL_STAMP := $(VENV)/.wheel-stamp
DEPS_STAMP := $(VENV)/.deps-stamp
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock
PY_SOURCES := $(shell find python -type f) pyproject.toml README.md LICENSE-MIT LICENSE-APACHE
EXTRAS ?= test,spark,bench

.PHONY: help run test setup venv wheel cargo-test pytest lint stubtest fmt clean bench bench-py bench-spark loom valgrind asan test-free-threaded
.PHONY: fuzz fuzz-smoke fuzz-tools churn leakcheck

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

$(VENV)/bin/python:
	@test -n "$(PYTHON)" || { echo "make: needs Python 3.11 or later, and none of python3, python3.14, python3.13, python3.12 or python3.11 is; name one: make ... PYTHON=/path/to/python3.11" >&2; exit 2; }
	@$(PYTHON) -c '$(NEW_ENOUGH)' || { echo "make: PYTHON=$(PYTHON) is older than Python 3.11, which pyspark 4.3 needs" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(DEPS_STAMP): pyproject.toml scripts/install_extras.py Makefile | $(VENV)/bin/python
	$(PY) scripts/install_extras.py $(EXTRAS)
	touch $@

$(WHEEL_STAMP): $(DEPS_STAMP) $(RUST_SOURCES) $(PY_SOURCES)
	rm -rf target/wheels
	$(VENV)/bin/maturin build --release --quiet --out target/wheels --interpreter $(PY)
	$(PIP) install --quiet --force-reinstall --no-deps target/wheels/topicmatch-*.whl
	touch $@

setup: $(WHEEL_STAMP) ## Create the virtualenv, build the release wheel, install it and its dependencies

run: setup ## Set up, then run the demo job on Spark local mode (200,000 generated topics against 200 generated patterns) into target/route-out
	$(VENV)/bin/topicmatch route --demo --dialect mqtt --master 'local[*]' --out target/route-out

test: setup cargo-test fuzz-smoke pytest ## Set up, then run every test (cargo test, fuzz smoke run with cargo-fuzz installed into target/tools, pytest)

cargo-test: ## Rust tests of the whole workspace
	cargo test --workspace --quiet
	cargo test --benches --quiet

pytest: setup ## Python tests
	$(PY) -m pytest -q

stubtest: setup ## Check the hand-written stubs against the compiled module
	$(PY) -m mypy.stubtest topicmatch._native

# A free-threaded CPython (3.14t or later: pyo3 supports no earlier one) is not installed here;
# build one (`./configure --disable-gil`) and name it: make test-free-threaded FT_PYTHON=...
FT_PYTHON ?=
FT_VENV := .venv-ft
# Left out there: type checks (mypy), wheel installs, and the bench and Spark commands, whose
# extras pull in modules that re-enable the GIL or have no free-threaded wheels.
FT_SKIP := --ignore=tests/spark --ignore=tests/test_stubs.py --ignore=tests/test_install.py --ignore=tests/test_bench.py --ignore=tests/test_cli.py

test-free-threaded: ## Every Python test of the binding on a free-threaded CPython (FT_PYTHON=path), in .venv-ft
	@test -n "$(FT_PYTHON)" || { echo "give FT_PYTHON=/path/to/python3.14t (a --disable-gil build)"; exit 2; }
	$(FT_PYTHON) -c "import sys; sys.exit(0 if not sys._is_gil_enabled() else 'not a free-threaded CPython')"
	test -x $(FT_VENV)/bin/python || $(FT_PYTHON) -m venv $(FT_VENV)
	$(FT_VENV)/bin/python -m pip --version || { $(PIP) download --quiet --no-deps --dest target/ft-pip pip && $(FT_VENV)/bin/python target/ft-pip/pip-*.whl/pip install --quiet --no-index target/ft-pip/pip-*.whl; }
	$(FT_VENV)/bin/python -m pip install --quiet "pytest>=8.3,<10" "pytest-timeout>=2.3,<3" "hypothesis>=6.120,<7" "pyarrow>=18" "paho-mqtt>=2.1,<3"
	rm -rf target/wheels-ft
	$(VENV)/bin/maturin build --release --quiet --out target/wheels-ft --interpreter $(FT_VENV)/bin/python
	$(FT_VENV)/bin/python -m pip install --quiet --force-reinstall --no-deps target/wheels-ft/topicmatch-*.whl
	$(FT_VENV)/bin/python -m pytest -q $(FT_SKIP)

bench-spark: setup ## The Spark pipeline benchmark: topicmatch vs plain Spark SQL (several minutes)
	$(PY) -m topicmatch.spark.bench

lint: setup ## rustfmt, clippy and mypy, as CI runs them
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(PY) -m mypy

bench: ## Criterion benchmarks of every algorithm beside floor and naive (a few minutes)
	cargo bench -p topicmatch-benches

bench-py: setup ## The Python benchmark (tables, JSON and plots in target/bench) and pytest-benchmark
	mkdir -p target/bench
	$(VENV)/bin/topicmatch bench --json target/bench/python.json --plot target/bench/plots
	TOPICMATCH_BENCH=1 $(PY) -m pytest -q tests/bench

fmt: ## Format the Rust code
	cargo fmt --all

# Hardening (docs/HARDENING.md): fuzzing, churn, leak check.
FUZZ_TARGETS := parse differential filtered
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 15
CHURN_PATTERNS ?= 2000000

# cargo-fuzz goes into the project's own target/tools (FUZZ_TOOLS=DIR puts it elsewhere), not
# into ~/.cargo; `make clean` removes it.
FUZZ_TOOLS ?= $(CURDIR)/target/tools
CARGO_FUZZ := $(FUZZ_TOOLS)/bin/cargo-fuzz

fuzz-tools: $(CARGO_FUZZ) ## Install cargo-fuzz from crates.io into target/tools (FUZZ_TOOLS) if missing, not globally

$(CARGO_FUZZ):
	@echo "installing cargo-fuzz into $(FUZZ_TOOLS) (once; not into ~/.cargo)"
	cargo install --quiet --root $(FUZZ_TOOLS) cargo-fuzz --locked

fuzz: fuzz-tools ## Run each cargo-fuzz target for FUZZ_SECONDS (default 300) and print its figures
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p fuzz/corpus/$$t target; \
	  echo "fuzz $$t for $(FUZZ_SECONDS) s"; \
	  PATH="$(FUZZ_TOOLS)/bin:$$PATH" RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz $$t fuzz/corpus/$$t fuzz/regressions/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 > target/fuzz-$$t.log 2>&1 \
	    || { tail -40 target/fuzz-$$t.log; exit 1; }; \
	  grep -E '^Done|number_of_executed_units|corpus' target/fuzz-$$t.log | tail -3; \
	done

fuzz-smoke: ## A short fuzz run of every target (FUZZ_SMOKE_SECONDS each; installs cargo-fuzz into target/tools), part of `make test`
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS)

churn: ## CHURN_PATTERNS (default 2M) subscribe+unsubscribe per algorithm; prints RSS before/after
	TOPICMATCH_CHURN_PATTERNS=$(CHURN_PATTERNS) cargo test --release -p topicmatch-core --test churn -- --nocapture

leakcheck: ## The core's Rust test suite under LeakSanitizer (fails on any leak)
	RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=leak" CARGO_TARGET_DIR=target/lsan \
	  cargo test -p topicmatch-core --tests --target $$(rustc -vV | sed -n 's/^host: //p')

loom: ## Model-check the cstrie's CAS protocol with loom (every interleaving of small models)
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p topicmatch-core --release --test loom_cstrie

# The cstrie's unit tests (its unsafe code), the conformance suite and the concurrent stress.
CSTRIE_TESTS := --lib --test conformance --test stress
VALGRIND := valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite

# Twice: as built (the cstrie's node cache included), then with the cache off
# (`--cfg topicmatch_no_pool`) so that memcheck sees every node freed and any use after it.
valgrind: ## Run the cstrie tests under valgrind memcheck
	CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$(VALGRIND)" cargo test -p topicmatch-core --release $(CSTRIE_TESTS)
	RUSTFLAGS="--cfg topicmatch_no_pool" CARGO_TARGET_DIR=target/valgrind \
	  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$(VALGRIND)" cargo test -p topicmatch-core --release $(CSTRIE_TESTS)

# With the cstrie's node cache off, so that ASan sees every node freed.
asan: ## Run the cstrie tests under AddressSanitizer (stable rustc via RUSTC_BOOTSTRAP)
	RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address --cfg topicmatch_no_pool" CARGO_TARGET_DIR=target/asan \
	  cargo test -p topicmatch-core --target x86_64-unknown-linux-gnu $(CSTRIE_TESTS)

clean: ## Remove build products and the virtualenv
	cargo clean
	rm -rf $(VENV) $(FT_VENV) target/wheels
