"""Sustained `Matcher.lookup_many` throughput from N threads sharing one matcher, with the CPU
time the threads used: a check on `bench_lookup_many_threads.py`, whose best-of-many short runs
favour lucky windows on both sides of its ratio.

Not a test: a measurement. Each thread walks the whole ftm workload (thread k takes batches
k, k + N, k + 2N, ...) for the given seconds, dropping each result.

    .venv/bin/python scripts/sustained_lookup_many_threads.py ALGORITHM BATCH SECONDS THREADS
"""

from __future__ import annotations

import sys
import threading
import time

from topicmatch.bench.scaling import warm_ftm


def main() -> None:
    algorithm, batch, seconds, threads = (sys.argv[1], int(sys.argv[2]), float(sys.argv[3]),
                                          int(sys.argv[4]))
    m, batches = warm_ftm(algorithm, batch)
    lookup_many = m.lookup_many
    counts = [0] * threads
    cpu = [0.0] * threads
    stop = time.perf_counter() + seconds

    def work(k: int) -> None:
        n, j, began = 0, k, time.thread_time()
        while time.perf_counter() < stop:
            lookup_many(batches[j % len(batches)])
            n += batch
            j += threads
        counts[k], cpu[k] = n, time.thread_time() - began

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    began = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - began
    n = sum(counts)
    print(f"{algorithm} batch {batch} {threads}t: {n / wall / 1e6:.2f} M topics/s, "
          f"cores used {sum(cpu) / wall:.2f}, CPU {1e9 * sum(cpu) / n:.0f} ns/topic")


if __name__ == "__main__":
    main()
