# topicmatch: the two commands are `make run` and `make test`; `make help` lists the rest.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
WHEEL_STAMP := $(VENV)/.wheel-stamp
DEPS_STAMP := $(VENV)/.deps-stamp
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock
PY_SOURCES := $(shell find python -type f) pyproject.toml README.md
EXTRAS ?= test,spark

.PHONY: help run test setup venv wheel cargo-test pytest lint stubtest fmt clean loom valgrind asan

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(DEPS_STAMP): pyproject.toml scripts/install_extras.py | $(VENV)/bin/python
	$(PY) scripts/install_extras.py $(EXTRAS)
	touch $@

$(WHEEL_STAMP): $(DEPS_STAMP) $(RUST_SOURCES) $(PY_SOURCES)
	rm -rf target/wheels
	$(VENV)/bin/maturin build --release --quiet --out target/wheels
	$(PIP) install --quiet --force-reinstall --no-deps target/wheels/topicmatch-*.whl
	touch $@

setup: $(WHEEL_STAMP) ## Create the virtualenv, build the release wheel, install it and its dependencies

run: setup ## Set up, then run the main job on its embedded default (the seed5 demo)
	$(VENV)/bin/topicmatch route

test: setup cargo-test pytest ## Set up, then run every test (cargo test, then pytest)

cargo-test: ## Rust tests of the whole workspace
	cargo test --workspace --quiet
	cargo test --benches --quiet

pytest: setup ## Python tests
	$(PY) -m pytest -q

stubtest: setup ## Check the hand-written stubs against the compiled module
	$(PY) -m mypy.stubtest topicmatch._native

lint: ## rustfmt and clippy, as CI would
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

fmt: ## Format the Rust code
	cargo fmt --all

loom: ## Model-check the cstrie's CAS protocol with loom (every interleaving of small models)
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p topicmatch-core --release --test loom_cstrie

# The cstrie's unit tests (its unsafe code), the conformance suite and the concurrent stress.
CSTRIE_TESTS := --lib --test conformance --test stress
VALGRIND := valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite

valgrind: ## Run the cstrie tests under valgrind memcheck
	CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$(VALGRIND)" cargo test -p topicmatch-core --release $(CSTRIE_TESTS)

asan: ## Run the cstrie tests under AddressSanitizer (stable rustc via RUSTC_BOOTSTRAP)
	RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan \
	  cargo test -p topicmatch-core --target x86_64-unknown-linux-gnu $(CSTRIE_TESTS)

clean: ## Remove build products and the virtualenv
	cargo clean
	rm -rf $(VENV) target/wheels
