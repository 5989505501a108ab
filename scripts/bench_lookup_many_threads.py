"""Throughput of `Matcher.lookup_many` from one thread and from two threads sharing one matcher.

Not a test: a measurement (see `topicmatch.bench.scaling` for the method). Prints topics/s
with 1 and 2 threads and their ratio for each algorithm and batch size on the ftm workload.

    .venv/bin/python scripts/bench_lookup_many_threads.py [--batch N ...] [--repeats N]
        [--seconds S] [--json FILE] [algorithm ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from topicmatch.bench import report, scaling


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("algorithms", nargs="*", default=["cstrie", "trie", "optimized_bitmap"])
    parser.add_argument("--batch", type=int, action="append", help="batch sizes (100, 1000)")
    parser.add_argument("--threads", type=int, default=2, help="the N of the N-thread runs")
    parser.add_argument("--repeats", type=int, default=40, help="runs per thread count (best kept)")
    parser.add_argument("--seconds", type=float, default=0.02, help="about how long one run is")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    results = scaling.scaling(args.algorithms, tuple(args.batch or (100, 1000)),
                              (1, args.threads), args.repeats, args.seconds)
    print(scaling.render(results))
    if args.json:
        report.write_json([r for s in results for r in s.records()], args.json)


if __name__ == "__main__":
    main()
