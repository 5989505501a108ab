"""How much of `Matcher.lookup_many`'s time holds the GIL: ns per topic, from perf samples.

Not a test: a measurement. One thread (or ``--threads N`` sharing the matcher) loops
`lookup_many` over ftm batches (and drops each result, as the thread-scaling benchmark does)
while `perf record --call-graph dwarf` samples it. A sample is GIL-free when its stack is inside `gil::detach`'s closure; every other sample
of the loop holds the GIL, split into where: borrowing the topics, building the rows, the
GIL release/re-acquire itself, the rest of the call, and the caller (the Python loop and
freeing the previous result). Shares times the loop's CPU ns/topic give ns/topic, which
depend little on other processes (CPU time, not wall time). Needs `perf`.

    .venv/bin/python scripts/profile_lookup_many_gil.py [--batch N] [--seconds S] [--detail NS]
        [--threads N] [algorithm ...]
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from topicmatch.bench.scaling import warm_ftm

#: (bucket, frame substring); the first bucket whose substring is on the stack wins.
HELD_INSIDE = (
    ("topics", "topics::Topics"),
    ("rows", "rows::Batch"),
    ("gil switch", "Python::detach"),
)


def classify(stack: list[str]) -> str:
    text = "\n".join(stack)
    if "gil::detach::{{closure}}" in text:
        return "free"
    if "__pymethod_lookup_many__" in text:
        for bucket, frame in HELD_INSIDE:
            if frame in text:
                return bucket
        return "call (other)"
    return "caller"


def samples(data: Path, tids: set[str],
            leaves: collections.Counter[tuple[str, str]]) -> collections.Counter[str]:
    """Bucket counts of the looping threads' samples; `leaves` counts (bucket, leaf function)."""
    out = subprocess.run(["perf", "script", "-i", str(data), "-F", "tid,ip,sym"],
                         capture_output=True, text=True, check=True).stdout
    counts: collections.Counter[str] = collections.Counter()
    for block in out.split("\n\n"):
        lines = block.strip().splitlines()
        if lines and lines[0].strip() in tids:
            bucket = classify(lines[1:])
            counts[bucket] += 1
            if len(lines) > 1:
                leaves[bucket, lines[1].split(maxsplit=1)[-1]] += 1
    return counts


def profile(algorithm: str, batch: int, seconds: float, data: Path, detail: int,
            threads: int) -> None:
    m, batches = warm_ftm(algorithm, batch)
    lookup_many = m.lookup_many
    counts_cpu = [(0, 0.0)] * threads
    tids: set[str] = set()
    go, done = threading.Event(), threading.Event()

    def loop(k: int) -> None:
        tids.add(str(threading.get_native_id()))
        go.wait()
        n, began = 0, time.thread_time()
        # Thread k walks its own batches (distinct ones, as in the scaling benchmarks).
        mine = batches[k * 50 : (k + 1) * 50] or batches[:50]
        while not done.is_set():
            for b in mine:
                lookup_many(b)
            n += len(mine) * batch
        counts_cpu[k] = (n, time.thread_time() - began)

    # The threads exist before perf attaches: `perf record -p` follows only those.
    workers = [threading.Thread(target=loop, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    while len(tids) < threads:
        time.sleep(0.01)
    perf = subprocess.Popen(["perf", "record", "-q", "-F", "1999", "--call-graph", "dwarf,8192",
                             "-p", str(os.getpid()), "-o", str(data), "--", "sleep",
                             str(seconds)], stdout=subprocess.DEVNULL)
    time.sleep(0.2)
    go.set()
    perf.wait()
    done.set()
    for w in workers:
        w.join()
    n = sum(c[0] for c in counts_cpu)
    cpu = sum(c[1] for c in counts_cpu)
    leaves: collections.Counter[tuple[str, str]] = collections.Counter()
    counts = samples(data, tids, leaves)
    total = sum(counts.values())
    per_topic = 1e9 * cpu / n
    held = total - counts["free"]
    print(f"{algorithm} batch {batch}, {threads} thread(s): {per_topic:.0f} CPU ns/topic, {total} samples; "
          f"GIL held {held / total * per_topic:.0f} ns/topic ({held / total:.0%}), "
          f"free {counts['free'] / total * per_topic:.0f}")
    for bucket in ("topics", "rows", "gil switch", "call (other)", "caller", "free"):
        print(f"    {bucket:13} {counts[bucket] / total * per_topic:5.0f} ns/topic")
        for (name, leaf), c in leaves.most_common():
            if name == bucket and c / total * per_topic >= detail > 0:
                print(f"        {c / total * per_topic:5.1f}  {leaf[:100]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("algorithms", nargs="*", default=["cstrie", "trie"])
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=1, help="threads looping on one matcher")
    parser.add_argument("--detail", type=float, default=0,
                        help="also list leaf functions costing at least this many ns/topic")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for algorithm in args.algorithms:
            profile(algorithm, args.batch, args.seconds, Path(tmp) / "perf.data", args.detail,
                    args.threads)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
