"""Sustained `Matcher.lookup_many` throughput from N threads sharing one matcher, with the CPU
time the threads used: a check on `bench_lookup_many_threads.py`, whose best-of-many short runs
favour lucky windows on both sides of its ratio.

Not a test: a measurement. Each thread walks the whole ftm workload (thread k takes batches
k, k + N, k + 2N, ...) for the given seconds, dropping each result. With ``--pairs K`` the
same process alternates K one-thread and K N-thread windows of that length and prints each
pair's ratio and their median, so that drift in the machine's load falls on both sides.

    .venv/bin/python scripts/sustained_lookup_many_threads.py ALGORITHM BATCH SECONDS THREADS
        [--pairs K]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable, Sequence

from topicmatch.bench.scaling import warm_ftm


def window(lookup_many: Callable[[Sequence[str]], object], batches: list[Sequence[str]],
           batch: int, seconds: float, threads: int) -> tuple[float, float, float]:
    """Topics/s, cores used (CPU time over wall time) and CPU ns per topic of one window."""
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
    return n / wall, sum(cpu) / wall, 1e9 * sum(cpu) / n


def line(label: str, rate: float, cores: float, ns: float) -> str:
    return f"{label}: {rate / 1e6:.2f} M topics/s, cores used {cores:.2f}, CPU {ns:.0f} ns/topic"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("algorithm")
    parser.add_argument("batch", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("threads", type=int)
    parser.add_argument("--pairs", type=int, default=0,
                        help="alternate this many 1-thread and N-thread windows; print ratios")
    args = parser.parse_args()
    m, batches = warm_ftm(args.algorithm, args.batch)
    name = f"{args.algorithm} batch {args.batch}"
    if not args.pairs:
        rate, cores, ns = window(m.lookup_many, batches, args.batch, args.seconds, args.threads)
        print(line(f"{name} {args.threads}t", rate, cores, ns))
        return
    ratios = []
    for k in range(args.pairs):
        one = window(m.lookup_many, batches, args.batch, args.seconds, 1)
        many = window(m.lookup_many, batches, args.batch, args.seconds, args.threads)
        ratios.append(many[0] / one[0])
        print(f"{name} pair {k + 1}: {line('1t', *one)}; {line(f'{args.threads}t', *many)}; "
              f"{args.threads}t/1t {ratios[-1]:.2f}x")
    print(f"{name}: {args.threads}t/1t median {statistics.median(ratios):.2f}x over "
          f"{args.pairs} pairs (range {min(ratios):.2f}-{max(ratios):.2f}x)")


if __name__ == "__main__":
    main()
