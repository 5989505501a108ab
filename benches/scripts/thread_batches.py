"""`lookup_arrow` and `lookup_many` from N threads sharing one `cstrie` matcher loaded with ftm,
two ways: every thread cycling through the same batch objects (as `topicmatch.bench.scaling`
does), and each thread through its own copies of them (its own `str` objects, its own pyarrow
arrays), as threads that each take their own work from a queue or a file hold.

Whether the threads share the batches' objects decides what they contend on outside the
matcher: on a free-threaded CPython, the reference counts of the same `str` and array objects;
on any CPython, the reference counts that pyarrow's export takes on an array's buffers. Runs of
each thread count and each way alternate, and each keeps its best. Run after `make setup`:

    .venv/bin/python benches/scripts/thread_batches.py [--threads 1 2 4 8 16] [--repeats 6]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from topicmatch.bench import scaling
from topicmatch.bench.throughput import timed_threads
from topicmatch.workloads import ftm_messages

CALLS = ("lookup_arrow", "lookup_many")
BATCHES = (1_000, 10_000)


def fresh(topic: str) -> str:
    """An equal `str` that is a distinct object."""
    return ("" + topic + " ")[:-1]


def copies(call: str, batches: Sequence[Sequence[str]], n: int) -> list[list[Any]]:
    """`n` independent copies of `batches`, as `call` takes them."""
    if call == "lookup_arrow":
        return [[pa.array([fresh(t) for t in b], pa.string()) for b in batches]
                for _ in range(n)]
    return [[[fresh(t) for t in b] for b in batches] for _ in range(n)]


def run(m: Any, call: str, per_thread: Sequence[Sequence[Any]], threads: int,
        rounds: int, batch: int) -> float:
    """Topics per second of `threads` threads, thread `k` looking up `rounds` batches of
    `per_thread[k]`."""

    def work(k: int) -> None:
        look = scaling.caller(m, call)
        mine = per_thread[k]
        for r in range(rounds):
            look(mine[(k * rounds + r) % len(mine)])

    return threads * rounds * batch / timed_threads(threads, work)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--repeats", type=int, default=6)
    args = parser.parse_args(argv)
    counts = sorted({1, *args.threads})
    m = scaling.loaded("cstrie")
    stream = ftm_messages()
    for call in CALLS:
        for batch in BATCHES:
            batches = scaling.batches_of(stream, batch)
            one = copies(call, batches, 1)[0]
            ways = {"shared": [one] * max(counts), "own": copies(call, batches, max(counts))}
            probe = run(m, call, ways["shared"], 1, max(1, 2_000 // batch), batch)
            rounds = max(1, int(0.1 * probe / batch))
            best = {(way, t): 0.0 for way in ways for t in counts}
            for _ in range(args.repeats):
                for t in counts:
                    for way, data in ways.items():
                        best[way, t] = max(best[way, t], run(m, call, data, t, rounds, batch))
            for way in ways:
                print(f"{call:12} batch {batch:6} {way:6} 1t {best[way, 1] / 1e6:6.2f} M/s  "
                      + "  ".join(f"{t}t {best[way, t] / best[way, 1]:5.2f}x"
                                  for t in counts[1:]), flush=True)


if __name__ == "__main__":
    main()
