#!/bin/sh
# The thread-scaling figures of docs/BENCHMARKS.md ("On 16 cores"), every one from one run, on
# a machine that has CPython 3.12 with pyarrow but no Rust toolchain and no network (a lent
# many-core machine). Two steps:
#
#   sh benches/scripts/many_cores.sh prepare DIR   # here: the release examples, a wheel for
#                                                  # CPython 3.12 (PY312, default python3.12)
#                                                  # and paho-mqtt's, into DIR
#   sh benches/scripts/many_cores.sh run DIR       # there, from the repository's root
#
# PYTHON names the interpreter `run` uses (default python3), MATURIN the maturin `prepare`
# builds with (default maturin).
#
# `run` installs the wheels into a folder of its own (nothing of the machine's changes) and
# prints, from 1, 2, 4, 8 and 16 threads: the core's batch call (`threads`, the ceiling of the
# Python batch calls), the whole Python boundary bench, `lookup_many` and `lookup_arrow` in
# batches of 5,000, `FieldMatcher` and `where=` (`content_threads`), and `threads` again, so
# that drift of the machine over the run shows. It took 4 minutes on the 2-core box; more
# cores take longer (each thread count runs as many rounds). DIR must travel with the
# repository to that machine.
set -eu
usage() {
  echo "usage: sh $0 prepare DIR | run DIR" >&2
  exit 2
}
[ $# -eq 2 ] || usage
dir=$2
examples="threads content_threads passes"
case $1 in
  prepare)
    mkdir -p "$dir"
    rm -f "$dir"/*.whl
    for example in $examples; do
      cargo build --release --quiet -p topicmatch-benches --example "$example"
      cp "target/release/examples/$example" "$dir/"
      strip "$dir/$example"
    done
    "${MATURIN:-maturin}" build --release --quiet --strip --out "$dir" \
      --interpreter "${PY312:-python3.12}"
    "${PY312:-python3.12}" -m pip download --quiet --no-deps --only-binary=:all: \
      --dest "$dir" "paho-mqtt>=2.1,<3"
    du -sh "$dir"
    ;;
  run)
    site=$(mktemp -d)
    trap 'rm -rf "$site"' EXIT
    py=${PYTHON:-python3}
    "$py" -m pip install --quiet --no-index --no-deps --no-compile --target "$site" \
      "$dir"/*.whl
    export PYTHONPATH="$site" PYTHONUNBUFFERED=1 TOPICMATCH_THREADS=1,2,4,8,16
    echo "== $(nproc) cores, $("$py" --version), $(date -u +%H:%M) UTC"
    "$dir/threads"
    "$py" -m topicmatch.bench.boundary --threads 1 2 4 8 16 --passes "$dir/passes"
    "$py" -c 'from topicmatch.bench import scaling
print(scaling.render(scaling.scaling(["cstrie"], batches=(5000,), threads=(2, 4, 8, 16),
      repeats=8, seconds=0.1, calls=("lookup_many", "lookup_arrow"))))'
    "$dir/content_threads"
    echo "== $(date -u +%H:%M) UTC"
    "$dir/threads"
    ;;
  *) usage ;;
esac
