"""How far any call that returns Python lists can scale with threads: `lookup_many` from N
threads against a stand-in made only of CPython's own parts, on ftm (the `cstrie`, batches
of 1,000 topics).

The stand-in does per batch what `lookup_many` does, without topicmatch: work that releases
the GIL as long as the walk (SHA-256 of a buffer sized to take as long as `lookup_arrow` of
the batch, which is the walk without the lists), then CPython copying the batch's rows
(`list(map(list.copy, rows))`: the lists made, then freed, holding the GIL). Runs of each
thread count alternate between the two, and each keeps its best. Run after `make setup`:

    .venv/bin/python benches/scripts/lists_stand_in.py [--threads 1 2 4 8 16] [--runs 6]
"""

from __future__ import annotations

import argparse
import hashlib

from topicmatch.bench import scaling
from topicmatch.bench.boundary import best_of
from topicmatch.bench.throughput import timed_threads
from topicmatch.workloads import ftm_messages

BATCH = 1_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--runs", type=int, default=6)
    args = parser.parse_args()
    counts = sorted({1, *args.threads})

    m = scaling.loaded("cstrie")
    batches = scaling.batches_of(ftm_messages(), BATCH)
    arrays = scaling.as_batches("lookup_arrow", batches)
    rows = [m.lookup_many(b) for b in batches]
    some = range(20)
    walk = best_of(5, lambda: [m.lookup_arrow(arrays[i]) for i in some]) / len(some)
    many = best_of(5, lambda: [m.lookup_many(batches[i]) for i in some]) / len(some)
    copy = best_of(5, lambda: [list(map(list.copy, rows[i])) for i in some]) / len(some)
    probe = bytes(1 << 20)
    per_byte = best_of(5, lambda: hashlib.sha256(probe).digest()) / len(probe)
    buffer = bytes(max(4096, int(walk / per_byte)))
    print(f"one batch of {BATCH:,} topics, one thread: lookup_many {many * 1e6:.1f} us, "
          f"lookup_arrow {walk * 1e6:.1f} us, copying its rows {copy * 1e6:.1f} us")

    rounds = max(1, int(0.1 / many))

    def stand_in(k: int) -> None:
        for r in range(rounds):
            hashlib.sha256(buffer).digest()
            list(map(list.copy, rows[(k * rounds + r) % len(rows)]))

    def ours(k: int) -> None:
        for r in range(rounds):
            m.lookup_many(batches[(k * rounds + r) % len(batches)])

    best = {name: dict.fromkeys(counts, 0.0) for name in ("stand-in", "lookup_many")}
    for _ in range(args.runs):
        for t in counts:
            for name, work in (("stand-in", stand_in), ("lookup_many", ours)):
                best[name][t] = max(best[name][t], t * rounds / timed_threads(t, work))
    for name, rates in best.items():
        print(f"{name:12} " + "   ".join(f"{t}t {rates[t] / rates[1]:.2f}x" for t in counts))


if __name__ == "__main__":
    main()
