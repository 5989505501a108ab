#!/bin/sh
# Instructions per ftm lookup inside each algorithm's `Matcher::lookup_into` (callees included),
# counted by callgrind: deterministic, so two builds compare without timing noise.
#
#   cargo build --release -p topicmatch-benches --example passes
#   sh benches/scripts/instructions.sh [PASSES_BINARY] [ALGORITHM...]
#
# Each algorithm runs the `passes` example alone (3 passes of the 100,000 ftm topics; 10 for
# inverted_bitmap, so its first pass's row compiles weigh little; 1 for naive, which takes
# minutes) with collection switched on only inside its matcher's `lookup_into`; the count is
# the total divided by the lookups.
set -eu
bin=${1:-target/release/examples/passes}
[ $# -gt 0 ] && shift
algorithms=${*:-trie cstrie optimized_bitmap inverted_bitmap auto naive}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '| algorithm | passes | instructions per lookup |\n|---|---|---|\n'
for name in $algorithms; do
  case $name in
    trie) symbol='*::TrieMatcher*as*Matcher*lookup_into*'; passes=3 ;;
    cstrie) symbol='*CsTrieMatcher*as*Matcher*lookup_into*'; passes=3 ;;
    optimized_bitmap) symbol='*OptimizedBitmapMatcher*as*Matcher*lookup_into*'; passes=3 ;;
    inverted_bitmap) symbol='*InvertedBitmapMatcher*as*Matcher*lookup_into*'; passes=10 ;;
    auto) symbol='*AutoMatcher*as*Matcher*lookup_into*'; passes=3 ;;
    naive) symbol='*NaiveMatcher*as*Matcher*lookup_into*'; passes=1 ;;
    *) echo "unknown algorithm $name" >&2; exit 2 ;;
  esac
  valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect="$symbol" \
    "$bin" "$passes" "$name" >/dev/null 2>&1
  total=$(sed -n 's/^summary: //p' "$out")
  printf '| %s | %s | %s |\n' "$name" "$passes" \
    "$(echo "scale=1; $total / ($passes * 100000)" | bc)"
done
