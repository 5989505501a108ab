"""The Python API under pytest-benchmark, per algorithm beside the floor (a dict of answers),
on the seed's exact ftm workload. Run with ``make bench-py``."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import topicmatch as tm
from topicmatch.bench import workloads
from topicmatch.bench.peers import Floor, Ours

pytestmark = pytest.mark.benchmark

WORKLOAD = workloads.ftm(workloads.SIZES["quick"])
TOPICS = WORKLOAD.topics[:10_000]
BATCHES = [TOPICS[i : i + 1_000] for i in range(0, len(TOPICS), 1_000)]
FAST = [a for a in tm.ALGORITHMS if a != "naive"]


@pytest.fixture(scope="module", params=FAST)
def matcher(request: pytest.FixtureRequest) -> Ours:
    return Ours(request.param, WORKLOAD)


@pytest.fixture(scope="module")
def floor() -> Floor:
    return Floor(WORKLOAD, TOPICS)


def _each(lookup: Callable[[str], Any]) -> Callable[[], None]:
    def run() -> None:
        for topic in TOPICS:
            lookup(topic)

    return run


def test_floor_lookup(benchmark: Any, floor: Floor) -> None:
    benchmark.group = "lookup"
    benchmark(_each(floor.lookup))


def test_lookup(benchmark: Any, matcher: Ours) -> None:
    benchmark.group = "lookup"
    benchmark(_each(matcher.lookup))


def test_matches_any(benchmark: Any, matcher: Ours) -> None:
    benchmark.group = "matches_any"
    benchmark(_each(matcher.matches_any))


def test_lookup_many(benchmark: Any, matcher: Ours) -> None:
    benchmark.group = "lookup_many"
    result = benchmark(lambda: [matcher.lookup_many(b) for b in BATCHES])
    assert sum(len(r) for r in result) == len(TOPICS)


def test_lookup_many_threads(benchmark: Any, matcher: Ours) -> None:
    benchmark.group = "lookup_many, 2 threads"
    with ThreadPoolExecutor(2) as pool:
        benchmark(lambda: list(pool.map(matcher.lookup_many, BATCHES)))


def test_subscribe_unsubscribe(benchmark: Any, matcher: Ours) -> None:
    benchmark.group = "subscribe + unsubscribe"
    fresh = [f"x.{i}.y" for i in range(1_000)]

    def run() -> None:
        ids = [matcher.subscribe(p, 1_000_000 + i) for i, p in enumerate(fresh)]
        for i in ids:
            matcher.unsubscribe(i)

    benchmark(run)
