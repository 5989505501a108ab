"""Throughput: whole batches of lookups, the best of a few runs, on 1 and N threads; and the
hot/cold microbenchmarks of "Fast Topic Matching" (the CS-trie article): subscribe, unsubscribe,
one lookup."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from topicmatch.bench.peers import Loaded
from topicmatch.bench.records import Record

CHUNK = 1_000


def budget_topics(topics: Sequence[str], patterns: int, linear: bool,
                  budget: int) -> Sequence[str]:
    """A linear-scan target tests every pattern per topic, so one pass looks up only the first
    ``budget / patterns`` topics (at least one); its rate is per topic of that batch."""
    if not linear:
        return topics
    return topics[: max(1, min(len(topics), budget // max(patterns, 1)))]


def calibrated(loaded: Loaded, topics: Sequence[str], seconds: float) -> Sequence[str]:
    """The first topics one lookup pass gets through in about ``seconds`` (at least 10):
    a slow target then looks up fewer topics, and its rate is per topic of that batch."""
    probe = topics[:50]
    lookup = loaded.lookup
    started = time.perf_counter()
    for t in probe:
        lookup(t)
    per_topic = (time.perf_counter() - started) / max(len(probe), 1)
    return topics[: max(min(10, len(topics)), int(seconds / max(per_topic, 1e-9)))]


def _chunks(topics: Sequence[str], size: int = CHUNK) -> list[Sequence[str]]:
    return [topics[i : i + size] for i in range(0, len(topics), size)]


def _passes(loaded: Loaded, metric: str) -> Callable[[Sequence[str]], None]:
    """One pass of ``metric`` over a topic batch."""
    if metric == "lookup":
        lookup = loaded.lookup

        def run(topics: Sequence[str]) -> None:
            for t in topics:
                lookup(t)
    elif metric == "matches_any":
        matches_any = loaded.matches_any

        def run(topics: Sequence[str]) -> None:
            for t in topics:
                matches_any(t)
    else:
        lookup_many = loaded.lookup_many

        def run(topics: Sequence[str]) -> None:
            for chunk in _chunks(topics):
                lookup_many(chunk)
    return run


def timed_threads(threads: int, work: Callable[[int], None]) -> float:
    """Seconds from the first of ``threads`` threads starting ``work(k)`` (together, past a
    barrier) to the last one ending it. Each thread reads the clock itself: a thread that
    started them may wait for the GIL or a core while they run. If a thread's ``work``
    raises, the run raises that error once every thread has ended."""
    barrier = threading.Barrier(threads)
    spans = [(0.0, 0.0)] * threads
    failed: list[BaseException] = []

    def run(k: int) -> None:
        barrier.wait()
        began = time.perf_counter()
        try:
            work(k)
        except BaseException as e:  # noqa: BLE001 (re-raised in the calling thread)
            failed.append(e)
        spans[k] = (began, time.perf_counter())

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if failed:
        raise failed[0]
    return max(end for _, end in spans) - min(began for began, _ in spans)


def timed(run: Callable[[Sequence[str]], None], topics: Sequence[str], threads: int,
          repeats: int) -> float:
    """The best wall time of ``repeats`` passes, the batch split across ``threads``."""
    best = float("inf")
    shares = [topics[i::threads] for i in range(threads)]
    for _ in range(repeats):
        if threads == 1:
            started = time.perf_counter()
            run(topics)
            best = min(best, time.perf_counter() - started)
        else:
            best = min(best, timed_threads(threads, lambda k: run(shares[k])))
    return best


def throughput(name: str, workload: str, loaded: Loaded, topics: Sequence[str],
               thread_counts: Sequence[int], repeats: int,
               metrics: Sequence[str] = ("lookup", "lookup_many", "matches_any")) -> list[Record]:
    """``metric@Nt`` rows in messages per second."""
    out = []
    for metric in metrics:
        run = _passes(loaded, metric)
        run(topics[:CHUNK])  # warm up
        for threads in thread_counts:
            seconds = timed(run, topics, threads, repeats)
            out.append(Record(name, workload, f"{metric}@{threads}t", len(topics) / seconds,
                              "msg/s"))
    return out


def micro(name: str, workload: str, loaded: Loaded, fresh: Sequence[str], probe: str,
          batches: int) -> list[Record]:
    """Nanoseconds per subscribe, unsubscribe and probe lookup. Each batch subscribes 100
    patterns not held, then unsubscribes them, so the state stays near hot or cold and no
    subscribe repeats a held item (the article's harness repeats one, so every subscribe after
    its first is a no-op); the median batch is reported."""
    size = 100
    subscribe: list[float] = []
    unsubscribe: list[float] = []
    for b in range(batches):
        start = (b * size) % max(len(fresh) - size, 1)
        batch = fresh[start : start + size]
        subscribers = range(1_000_000 + start, 1_000_000 + start + len(batch))
        began = time.perf_counter_ns()
        handles: list[Any] = [loaded.subscribe(p, s) for p, s in zip(batch, subscribers)]
        middle = time.perf_counter_ns()
        for h in handles:
            loaded.unsubscribe(h)
        ended = time.perf_counter_ns()
        subscribe.append((middle - began) / len(batch))
        unsubscribe.append((ended - middle) / len(batch))
    lookup = loaded.lookup
    began = time.perf_counter_ns()
    lookup(probe)
    # About 2 ms per round: a linear scan of the hot set takes milliseconds per call.
    rounds = max(1, min(2_000, 2_000_000 // max(time.perf_counter_ns() - began, 1)))
    best = float("inf")
    for _ in range(max(batches // 10, 3)):
        began = time.perf_counter_ns()
        for _ in range(rounds):
            lookup(probe)
        best = min(best, (time.perf_counter_ns() - began) / rounds)
    median = sorted(subscribe)[len(subscribe) // 2]
    median_un = sorted(unsubscribe)[len(unsubscribe) // 2]
    return [
        Record(name, workload, "subscribe", median, "ns"),
        Record(name, workload, "unsubscribe", median_un, "ns"),
        Record(name, workload, "lookup_one", best, "ns"),
    ]
