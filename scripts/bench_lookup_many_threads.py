"""Throughput of `Matcher.lookup_many` from one thread and from two threads sharing one matcher.

Not a test: a measurement. Prints topics/s for 1 and 2 threads and their ratio, for each
algorithm asked for, on the ftm workload, twice: with the real results (converted back to
Python objects while holding the GIL) and with topics that match nothing (no conversion), so
the share of the GIL-held conversion is visible.

    .venv/bin/python scripts/bench_lookup_many_threads.py [algorithm ...]
"""

from __future__ import annotations

import sys
import threading
import time

import topicmatch as tm
from topicmatch.workloads import ftm_messages, ftm_subscriptions

BATCH = 10_000
ROUNDS = 20


def throughput(m: tm.Matcher, topics: list[str], threads: int) -> float:
    """Topics looked up per second by `threads` threads each doing `ROUNDS` batches."""
    batches = [topics[i : i + BATCH] for i in range(0, len(topics), BATCH)]
    start = threading.Barrier(threads + 1)

    def work() -> None:
        start.wait()
        for r in range(ROUNDS):
            m.lookup_many(batches[r % len(batches)])

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    began = time.perf_counter()
    for w in workers:
        w.join()
    return threads * ROUNDS * BATCH / (time.perf_counter() - began)


def main(algorithms: list[str]) -> None:
    topics = ftm_messages()
    misses = [f"nomatch.{t}.x.y" for t in topics]
    for algorithm in algorithms:
        m = tm.Matcher(dialect="amqp", algorithm=algorithm)
        for i, pattern in enumerate(ftm_subscriptions()):
            m.subscribe(pattern, i)
        for label, stream in (("ftm", topics), ("no-match", misses)):
            throughput(m, stream, 1)  # warm up
            one = max(throughput(m, stream, 1) for _ in range(3))
            two = max(throughput(m, stream, 2) for _ in range(3))
            print(
                f"{algorithm:8} {label:9} 1 thread {one / 1e6:6.2f} M/s   "
                f"2 threads {two / 1e6:6.2f} M/s   ratio {two / one:4.2f}x"
            )


if __name__ == "__main__":
    main(sys.argv[1:] or ["cstrie", "trie"])
