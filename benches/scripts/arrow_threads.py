"""`lookup_arrow` from N threads sharing one matcher, against one thread, on two streams:

- `ftm`: every thread looks up the 100,000 ftm topics (AMQP) in arrays of 1,000, ten times
  over (the topics repeat: caches answer them);
- `unique`: every thread looks up its own 300,000 topics that no thread sees twice, in arrays
  of 1,000, against 4,000 wildcard subscriptions (every topic matches about 46), with a cache
  of 1,024 topics that stays full: each lookup is a miss, walks the index, and asks the
  doorkeeper whether to admit the topic.

The GIL is released for the whole of each array, so what the threads share is the matcher:
its locks, its counters, its cache. Runs of 1 and N threads alternate, seven each, and each
count keeps its best (a run takes 0.03-1 s per thread). Run after `make setup`:

    .venv/bin/python benches/scripts/arrow_threads.py [ALGORITHM ...] [--threads 1 2 4 8 16] [--stream ftm unique]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import pyarrow as pa

import topicmatch as tm
from topicmatch.bench.throughput import timed_threads
from topicmatch.workloads import ftm_messages, ftm_subscriptions

BATCH = 1_000
UNIQUE = 300_000
CACHED = 1_024


def rate(m: tm.Matcher, per_thread: Sequence[Sequence[pa.Array]], threads: int) -> float:
    """Topics per second of `threads` threads, thread k looking up `per_thread[k]`."""

    def work(k: int) -> None:
        for array in per_thread[k]:
            m.lookup_arrow(array)

    topics = sum(len(a) for k in range(threads) for a in per_thread[k])
    return topics / timed_threads(threads, work)


def ftm(algorithm: str, threads: int) -> tuple[tm.Matcher, list[list[pa.Array]]]:
    m = tm.Matcher("amqp", algorithm)
    for i, pattern in enumerate(ftm_subscriptions()):
        m.subscribe(pattern, i)
    topics = ftm_messages()
    arrays = [pa.array(topics[i:i + BATCH], pa.string()) for i in range(0, len(topics), BATCH)]
    return m, [arrays * 10 for _ in range(threads)]


def unique(algorithm: str, threads: int) -> tuple[tm.Matcher, list[list[pa.Array]]]:
    m = tm.Matcher("amqp", algorithm, cache_capacity=CACHED)
    for i in range(2_000):
        m.subscribe(f"t{i % 50}.*.x{i % 7}", i)
        m.subscribe(f"t{i % 50}.#", 10_000 + i)

    def own(k: int) -> list[pa.Array]:
        return [pa.array([f"t{(j * 7 + k) % 50}.u{k}_{j}.x{j % 7}"
                          for j in range(first, first + BATCH)], pa.string())
                for first in range(0, UNIQUE, BATCH)]

    return m, [own(k) for k in range(threads)]


STREAMS: dict[str, Callable[[str, int], tuple[tm.Matcher, list[list[pa.Array]]]]] = {
    "ftm": ftm, "unique": unique}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("algorithms", nargs="*",
                        default=["cstrie", "optimized_bitmap", "auto", "inverted_bitmap"])
    parser.add_argument("--threads", type=int, nargs="+", default=[2])
    parser.add_argument("--stream", choices=sorted(STREAMS), nargs="+",
                        default=sorted(STREAMS))
    args = parser.parse_args(argv)
    most = max(args.threads)
    for stream in args.stream:
        for algorithm in args.algorithms:
            if stream == "unique" and algorithm not in ("cstrie", "inverted_bitmap"):
                continue  # no cache to miss
            m, per_thread = STREAMS[stream](algorithm, most)
            counts = sorted({1, *args.threads})
            for t in counts:
                rate(m, per_thread, t)  # warm-up
            best = dict.fromkeys(counts, 0.0)
            for _ in range(7):
                for t in counts:
                    best[t] = max(best[t], rate(m, per_thread, t))
            ratios = "  ".join(f"{t}t {best[t] / best[1]:.2f}x" for t in counts if t != 1)
            print(f"{stream:7} {algorithm:17} 1t {best[1] / 1e6:6.2f} M/s  {ratios}")


if __name__ == "__main__":
    main()
