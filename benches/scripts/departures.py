"""What a departure (a subscriber's last unsubscribe) costs, and how long the epoch collector
then takes to release a departed subscriber's object (AMQP, one algorithm).

- `pair`: one `subscribe` and one `unsubscribe` of a new subscriber, one thread, the best of
  five runs of 100,000 pairs.
- `backlog`: departures for SECONDS while another thread runs `lookup_many` of 2,000 topics
  (each batch waits for the GIL still pinned, which holds back the collector), then the count
  of `lookup_many` calls (one topic each) until the object of one more departure is released:
  the collector frees a few of its bags per collection, so this counts what the burst left.

Run after `make setup`:

    .venv/bin/python benches/scripts/departures.py [--algorithm cstrie] [--seconds 5]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

import topicmatch


def pair_ns(algorithm: str) -> float:
    """Nanoseconds per subscribe + unsubscribe of a new subscriber."""
    m = topicmatch.Matcher(dialect="amqp", algorithm=algorithm)
    m.subscribe("c.*", 0)
    best = float("inf")
    names = [f"s{i}" for i in range(100_000)]
    for _ in range(5):
        start = time.perf_counter()
        for name in names:
            m.unsubscribe(m.subscribe("z.z", name))
        best = min(best, time.perf_counter() - start)
    return best / len(names) * 1e9


def backlog(algorithm: str, seconds: float) -> tuple[int, int]:
    """Departures during the burst, and batches until a later departure's release."""
    m = topicmatch.Matcher(dialect="amqp", algorithm=algorithm)
    m.subscribe("c.*", 5)
    for i in range(1_000):
        m.subscribe(f"t.{i}", i)
    stop = threading.Event()

    def reader() -> None:
        topics = ["c.d"] * 2_000
        while not stop.is_set():
            m.lookup_many(topics)

    thread = threading.Thread(target=reader)
    thread.start()
    departures = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        departures += 1
        m.unsubscribe(m.subscribe("z.z", "".join(["s", str(departures)])))
    stop.set()
    thread.join()
    # Made at run time: a constant would be immortal on a free-threaded build.
    sid = m.subscribe("a.b", "".join(["departing", "x" * 64]))
    obj = m.lookup_many(["a.b"])[0][0]
    held = sys.getrefcount(obj)
    m.unsubscribe(sid)
    batches = 0
    while sys.getrefcount(obj) >= held:
        batches += 1
        m.lookup_many(["c.d"])
        if batches > 50_000_000:
            raise SystemExit("never released")
    return departures, batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="cstrie")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print(f"{args.algorithm}: subscribe + unsubscribe {pair_ns(args.algorithm):.0f} ns")
    departures, batches = backlog(args.algorithm, args.seconds)
    print(f"{args.algorithm}: {departures} departures in {args.seconds:g} s beside a batching "
          f"thread, then {batches} batches until a departed object's release")


if __name__ == "__main__":
    main()
