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
EXTRAS ?= test,spark,bench

.PHONY: help run test setup venv wheel cargo-test pytest lint stubtest fmt clean bench bench-py

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

bench: ## Criterion benchmarks of every algorithm beside floor and naive (a few minutes)
	cargo bench -p topicmatch-benches

bench-py: setup ## The Python benchmark (tables, JSON and plots in target/bench) and pytest-benchmark
	mkdir -p target/bench
	$(VENV)/bin/topicmatch bench --json target/bench/python.json --plot target/bench/plots
	TOPICMATCH_BENCH=1 $(PY) -m pytest -q tests/bench

fmt: ## Format the Rust code
	cargo fmt --all

clean: ## Remove build products and the virtualenv
	cargo clean
	rm -rf $(VENV) target/wheels
