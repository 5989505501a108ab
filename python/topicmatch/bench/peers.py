"""What is measured: our algorithms, the ``floor`` and the Python peers, behind one interface.

Every target loads a workload (AMQP syntax, subscriber = pattern index) and answers
``lookup``, ``lookup_many`` and ``matches_any`` on topics it has converted to its own syntax
beforehand (conversion is not timed). A peer whose package is not installed is reported as
missing, never a crash.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import topicmatch as tm
from topicmatch.bench.workloads import Workload

class Loaded(Protocol):
    """One target holding one workload's subscriptions."""

    def convert(self, topics: Sequence[str]) -> list[str]: ...
    def lookup(self, topic: str) -> Any: ...
    def lookup_many(self, topics: Sequence[str]) -> Any: ...
    def matches_any(self, topic: str) -> bool: ...
    def subscribe(self, pattern: str, subscriber: int) -> Any: ...
    def unsubscribe(self, handle: Any) -> None: ...


@dataclass(frozen=True)
class Target:
    """Something to measure: ``kind`` is ``ours``, ``floor`` or ``peer``."""

    name: str
    kind: str
    #: Whether a lookup scans every subscription (its topic batch is then cut to a budget).
    linear: bool
    load: Callable[[Workload], Loaded]
    #: Why it cannot run here (a peer not installed), or ``None``.
    missing: str | None = None

    def skip_reason(self, workload: Workload, linear_peer_limit: int) -> str | None:
        """Why this target sits out ``workload``, or ``None``: a linear-scan peer (one regex
        or filter test per subscription per topic, in Python) skips sets above the limit."""
        if self.missing:
            return self.missing
        if self.kind == "peer" and self.linear and workload.size > linear_peer_limit:
            return f"linear scan of {workload.size:,} patterns"
        return None


def _mqtt(text: str) -> str:
    return text.replace(".", "/").replace("*", "+")


class Ours:
    """A ``topicmatch.Matcher`` of one algorithm (with its cache bound, if given)."""

    def __init__(self, algorithm: str, workload: Workload, cache_capacity: int | None = None) -> None:
        self.matcher = tm.Matcher("amqp", algorithm, cache_capacity=cache_capacity)
        for index, pattern in enumerate(workload.patterns):
            self.matcher.subscribe(pattern, index)
        self.lookup = self.matcher.lookup
        self.lookup_many = self.matcher.lookup_many
        self.matches_any = self.matcher.matches_any

    def convert(self, topics: Sequence[str]) -> list[str]:
        return list(topics)

    def subscribe(self, pattern: str, subscriber: int) -> int:
        return self.matcher.subscribe(pattern, subscriber)

    def unsubscribe(self, handle: int) -> None:
        self.matcher.unsubscribe(handle)


class Floor:
    """A Python dict from each topic to its precomputed answer: no matcher is cheaper."""

    def __init__(self, workload: Workload, topics: Sequence[str]) -> None:
        reference = Ours(fast_algorithm(), workload)
        self.answers = {t: reference.lookup(t) for t in topics}
        self.any = {t: bool(found) for t, found in self.answers.items()}
        self.lookup = self.answers.__getitem__
        self.matches_any = self.any.__getitem__

    def convert(self, topics: Sequence[str]) -> list[str]:
        return list(topics)

    def lookup_many(self, topics: Sequence[str]) -> list[Any]:
        answers = self.answers
        return [answers[t] for t in topics]

    def subscribe(self, pattern: str, subscriber: int) -> str:
        self.answers[pattern] = [subscriber]
        return pattern

    def unsubscribe(self, handle: str) -> None:
        del self.answers[handle]


class Paho:
    """paho-mqtt's ``MQTTMatcher``: a pure-Python trie, one value per filter."""

    def __init__(self, workload: Workload) -> None:
        from paho.mqtt.matcher import MQTTMatcher

        self.matcher = MQTTMatcher()
        for index, pattern in enumerate(workload.patterns):
            self.subscribe(pattern, index)

    def convert(self, topics: Sequence[str]) -> list[str]:
        return [_mqtt(t) for t in topics]

    def lookup(self, topic: str) -> list[int]:
        return [s for subscribers in self.matcher.iter_match(topic) for s in subscribers]

    def lookup_many(self, topics: Sequence[str]) -> list[list[int]]:
        return [self.lookup(t) for t in topics]

    def matches_any(self, topic: str) -> bool:
        return next(self.matcher.iter_match(topic), None) is not None

    def subscribe(self, pattern: str, subscriber: int) -> tuple[str, int]:
        key = _mqtt(pattern)
        try:
            self.matcher[key].add(subscriber)
        except KeyError:
            self.matcher[key] = {subscriber}
        return key, subscriber

    def unsubscribe(self, handle: tuple[str, int]) -> None:
        key, subscriber = handle
        subscribers = self.matcher[key]
        subscribers.discard(subscriber)
        if not subscribers:
            del self.matcher[key]


class Kombu:
    """kombu's in-memory ``TopicExchange``: one anchored regex per binding, tried in turn
    (its own ``prepare_bind`` and ``lookup``)."""

    def __init__(self, workload: Workload) -> None:
        from kombu.transport.virtual.exchange import TopicExchange

        self.exchange = TopicExchange(None)
        self.table: list[tuple[str, str, int]] = []
        for index, pattern in enumerate(workload.patterns):
            self.subscribe(pattern, index)

    def convert(self, topics: Sequence[str]) -> list[str]:
        return list(topics)

    def lookup(self, topic: str) -> set[int]:
        return self.exchange.lookup(self.table, "bench", topic, None)

    def lookup_many(self, topics: Sequence[str]) -> list[set[int]]:
        return [self.lookup(t) for t in topics]

    def matches_any(self, topic: str) -> bool:
        return bool(self.lookup(topic))

    def subscribe(self, pattern: str, subscriber: int) -> tuple[str, str, int]:
        binding = self.exchange.prepare_bind(subscriber, "bench", pattern, None)
        self.table.append(binding)
        return binding

    def unsubscribe(self, handle: tuple[str, str, int]) -> None:
        self.table.remove(handle)


class _BrokerShim:
    """What amqtt's ``Broker._matches`` reads from its ``self``: a logger."""

    logger = logging.getLogger("topicmatch.bench.amqtt")


class Amqtt:
    """amqtt's broker: its ``Broker._matches`` on every filter of its subscription dict, as
    its broadcast loop does (a linear scan)."""

    def __init__(self, workload: Workload) -> None:
        from amqtt.broker import Broker

        self.matches = functools.partial(Broker._matches, _BrokerShim())
        self.subscriptions: dict[str, list[int]] = {}
        for index, pattern in enumerate(workload.patterns):
            self.subscribe(pattern, index)

    def convert(self, topics: Sequence[str]) -> list[str]:
        return [_mqtt(t) for t in topics]

    def lookup(self, topic: str) -> list[int]:
        matches = self.matches
        return [s for f, subscribers in self.subscriptions.items() if matches(topic, f)
                for s in subscribers]

    def lookup_many(self, topics: Sequence[str]) -> list[list[int]]:
        return [self.lookup(t) for t in topics]

    def matches_any(self, topic: str) -> bool:
        matches = self.matches
        return any(matches(topic, f) for f in self.subscriptions)

    def subscribe(self, pattern: str, subscriber: int) -> tuple[str, int]:
        key = _mqtt(pattern)
        self.subscriptions.setdefault(key, []).append(subscriber)
        return key, subscriber

    def unsubscribe(self, handle: tuple[str, int]) -> None:
        key, subscriber = handle
        subscribers = self.subscriptions[key]
        subscribers.remove(subscriber)
        if not subscribers:
            del self.subscriptions[key]


# The result cache of the ``cstrie_cached`` rows (as in the Rust benchmarks).
CACHED_CAPACITY = 16_384


def fast_algorithm() -> str:
    """The algorithm the floor's answers come from: the first one that does not scan."""
    return next((a for a in tm.ALGORITHMS if a != "naive"), tm.ALGORITHMS[0])


def _installed(module: str) -> str | None:
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    return None if found else f"missing ({module} not installed)"


def targets(topics_for_floor: Callable[[Workload], Sequence[str]]) -> list[Target]:
    """The floor, every algorithm in ``tm.ALGORITHMS`` (and ``cstrie_cached``: the ``cstrie`` with a
    result cache of ``CACHED_CAPACITY`` topics), then the peers."""
    out = [Target("floor", "floor", False,
                  lambda w: Floor(w, topics_for_floor(w)))]
    out += [
        Target(name, "ours", name == "naive", functools.partial(Ours, name))
        for name in tm.ALGORITHMS
    ]
    # The default algorithm with its result cache: cached and uncached figures side by side.
    out.append(Target("cstrie_cached", "ours", False,
                      functools.partial(Ours, "cstrie", cache_capacity=CACHED_CAPACITY)))
    out += [
        Target("paho", "peer", False, Paho, _installed("paho.mqtt.matcher")),
        Target("kombu", "peer", True, Kombu, _installed("kombu.transport.virtual.exchange")),
        Target("amqtt", "peer", True, Amqtt, _installed("amqtt.broker")),
    ]
    return out
