"""Threads sharing one matcher while other threads churn its subscriptions, for every algorithm.

Checked while running: subscriptions nobody removes are always found; a churning thread sees
its own completed subscribe and not its own completed unsubscribe; nothing is reported that no
pattern matches. Checked at the end: the matcher answers as a sequential replay of the final
subscriptions does.
"""

from __future__ import annotations

import functools
import random
import threading
import time

import pytest

import topicmatch as tm
from conftest import run_together

DIALECT = "amqp"
STABLE = 12
SLOTS = 16
CHURNERS = 2
READERS = 2
SECONDS = 0.4


def shape(k: int, tag: str) -> tuple[str, str]:
    """A pattern and a topic it matches; the shapes overlap so threads contend on levels."""
    return [
        (f"c.{tag}{k}.x", f"c.{tag}{k}.x"),
        (f"c.*.x.{tag}{k}", f"c.q.x.{tag}{k}"),
        (f"c.#.{tag}{k}", f"c.z.z.{tag}{k}"),
        (f"#.{tag}{k}.*", f"c.{tag}{k}.end"),
    ][k % 4]


def check_no_phantoms(found: list[str | int], topic: str, patterns: dict[str | int, str]) -> None:
    for sub in found:
        assert sub in patterns, f"{topic}: unknown subscriber {sub!r}"
        assert tm.matches(patterns[sub], topic, DIALECT), f"{topic}: phantom {sub!r}"


@pytest.mark.parametrize(
    ("algorithm", "cache_capacity"),
    # Every algorithm, and the cstrie with a result cache small enough for topics to evict
    # each other.
    [(a, None) for a in tm.ALGORITHMS] + [("cstrie", 8)],
    ids=[*tm.ALGORITHMS, "cstrie-cached"],
)
def test_concurrent_churn_keeps_every_invariant(algorithm: str, cache_capacity: int | None) -> None:
    m = tm.Matcher(dialect=DIALECT, algorithm=algorithm, cache_capacity=cache_capacity)
    stable = [shape(k, "s") for k in range(STABLE)]
    churn = [[shape(k, f"t{t}k") for k in range(SLOTS)] for t in range(CHURNERS)]
    patterns: dict[str | int, str] = {f"s{k}": p for k, (p, _) in enumerate(stable)}
    for t, slots in enumerate(churn):
        patterns.update({f"t{t}k{k}": p for k, (p, _) in enumerate(slots)})
    for k, (pattern, _) in enumerate(stable):
        m.subscribe(pattern, f"s{k}")

    errors: list[BaseException] = []
    finals: dict[int, dict[int, int]] = {}
    deadline = time.monotonic() + SECONDS

    def reader() -> None:
        try:
            probes = [topic for _, topic in stable]
            while not done.is_set():
                for k, found in enumerate(m.lookup_many(probes)):
                    assert f"s{k}" in found, f"lost s{k}"
                    check_no_phantoms(found, probes[k], patterns)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    def churner(t: int) -> None:
        try:
            rng = random.Random(t)
            present: dict[int, int] = {}
            while time.monotonic() < deadline:
                k = rng.randrange(SLOTS)
                pattern, probe = churn[t][k]
                if k in present:
                    assert m.unsubscribe(present.pop(k)) is True
                else:
                    present[k] = m.subscribe(pattern, f"t{t}k{k}")
                found = m.lookup(probe)
                assert (f"t{t}k{k}" in found) == (k in present), "own operation not seen"
                check_no_phantoms(found, probe, patterns)
            finals[t] = present
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    done = threading.Event()
    run_together([functools.partial(churner, t) for t in range(CHURNERS)], [reader] * READERS, done)
    assert not errors, errors

    replay = tm.Matcher(dialect=DIALECT, algorithm="naive")
    for k, (pattern, _) in enumerate(stable):
        replay.subscribe(pattern, f"s{k}")
    for t, present in finals.items():
        for k in present:
            replay.subscribe(churn[t][k][0], f"t{t}k{k}")
    probes = [topic for _, topic in stable] + [topic for slots in churn for _, topic in slots]
    for got, want in zip(m.lookup_many(probes), replay.lookup_many(probes), strict=True):
        assert sorted(map(str, got)) == sorted(map(str, want))
    assert len(m) == len(replay)


@pytest.mark.parametrize("algorithm", ["trie", "cstrie", "optimized_bitmap"])
def test_subscribers_come_and_go_while_readers_build_results(algorithm: str) -> None:
    """Churners subscribe and drop the same few subscriber values (each one leaves and comes
    back again and again) while readers turn lookups into Python objects: a result never holds
    a subscriber whose patterns do not match, the stable ones are always there, as plain
    `int`/`str` equal to what was subscribed; at the end, every subscriber is back or gone
    exactly as the final subscriptions say."""
    m = tm.Matcher(dialect=DIALECT, algorithm=algorithm)
    stable = {f"keep{k}": f"k.{k}.#" for k in range(4)}
    for sub, pattern in stable.items():
        m.subscribe(pattern, sub)
    shared: list[str | int] = ["shared-a", "shared-b", 10**12, 10**12 + 1]
    churn_patterns = ["k.*.x", "k.#", "#.x", "k.1.x"]
    probes = ["k.0.x", "k.1.x", "k.2.y", "k.3"]
    errors: list[BaseException] = []
    done = threading.Event()
    finals: dict[int, dict[tuple[int, int], int]] = {}

    def allowed(sub: str | int, topic: str) -> bool:
        if sub in stable:
            return tm.matches(stable[sub], topic, DIALECT)
        return sub in shared and any(tm.matches(p, topic, DIALECT) for p in churn_patterns)

    def reader() -> None:
        try:
            while not done.is_set():
                rows = m.lookup_many(probes)
                rows.append(m.lookup(probes[1]))
                for topic, row in zip([*probes, probes[1]], rows, strict=True):
                    assert len(row) == len(set(row)), f"{topic}: duplicates {row}"
                    for sub in row:
                        assert type(sub) in (int, str), f"{topic}: {type(sub)}"
                        assert allowed(sub, topic), f"{topic}: phantom {sub!r}"
                    for keep, pattern in stable.items():
                        if tm.matches(pattern, topic, DIALECT):
                            assert keep in row, f"{topic}: lost {keep}"
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    def churner(t: int) -> None:
        try:
            rng = random.Random(100 + t)
            present: dict[tuple[int, int], int] = {}
            deadline = time.monotonic() + SECONDS
            while time.monotonic() < deadline:
                key = (rng.randrange(len(shared)), rng.randrange(len(churn_patterns)))
                if key in present:
                    assert m.unsubscribe(present.pop(key)) is True
                else:
                    present[key] = m.subscribe(churn_patterns[key[1]], shared[key[0]])
            finals[t] = present
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    # One churner: (pattern, subscriber) pairs are idempotent, so two would share ids.
    run_together([functools.partial(churner, 0)], [reader] * READERS, done)
    assert not errors, errors

    replay = tm.Matcher(dialect=DIALECT, algorithm="naive")
    for sub, pattern in stable.items():
        replay.subscribe(pattern, sub)
    for present in finals.values():
        for s, p in present:
            replay.subscribe(churn_patterns[p], shared[s])
    got = m.lookup_many(probes)
    assert [sorted(map(str, r)) for r in got] == [
        sorted(map(str, r)) for r in replay.lookup_many(probes)]
    assert len(m) == len(replay)
