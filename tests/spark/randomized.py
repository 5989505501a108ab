"""Random workloads over a tiny alphabet, so that wildcards, empty words, '$' topics and
invalid topics all occur often; and the in-process expectation to compare Spark against."""

from __future__ import annotations

import random
from collections import Counter

import topicmatch as tm

SEPARATOR = {"amqp": ".", "mqtt": "/", "nats": "."}
WILDCARDS = {"amqp": ("*", "#"), "mqtt": ("+", "#"), "nats": ("*", ">")}
WORDS = ("a", "b", "$s", "", "a b", "é", "n\x00")

Row = tuple[int, object, bool]  # (message id, subscriber or None, has an error)


def patterns(dialect: str, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """``count`` valid (pattern, subscriber) pairs; subscribers repeat across patterns."""
    checker = tm.Matcher(dialect=dialect, algorithm="naive")
    out: list[tuple[str, str]] = []
    while len(out) < count:
        words = [rng.choice((*WORDS, *WILDCARDS[dialect])) for _ in range(rng.randint(0, 4))]
        pattern = SEPARATOR[dialect].join(words)
        if dialect == "mqtt" and rng.random() < 0.2:
            pattern = f"$share/g{rng.randrange(3)}/{pattern}"  # MQTT 5 shared subscription
        try:
            checker.subscribe(pattern, 0)
        except ValueError:
            continue
        out.append((pattern, f"s{rng.randrange(12)}"))
    return out


def topics(dialect: str, count: int, rng: random.Random) -> list[str]:
    """``count`` topics and a long one, some of them invalid in the dialect (wildcards, empty
    words, length)."""
    pool = (*WORDS, *WILDCARDS[dialect])
    out = [
        SEPARATOR[dialect].join(rng.choice(pool) for _ in range(rng.randint(0, 5)))
        for _ in range(count)
    ]
    return out + ["a" * 300]  # past AMQP's 255-byte limit


def expected(dialect: str, subs: list[tuple[str, str]], messages: list[str],
             keep_unmatched: bool, shared_subscriptions: bool | None = None,
             groups: list[str | None] | None = None) -> tuple[Counter[Row], dict[int, str]]:
    """What ``route`` must return, from in-process ``Matcher.lookup``: the multiset of rows and
    the error text of each invalid message. Groups choose their member by the topic's hash, as
    ``route`` does, from members joined in the same order."""
    matcher = tm.Matcher(dialect=dialect, algorithm="naive", group_policy="hash",
                         shared_subscriptions=shared_subscriptions)
    for (pattern, subscriber), group in zip(subs, groups or [None] * len(subs), strict=True):
        matcher.subscribe(pattern, subscriber, group=group)
    rows: Counter[Row] = Counter()
    errors: dict[int, str] = {}
    for i, topic in enumerate(messages):
        try:
            found = matcher.lookup(topic)
        except ValueError as exc:
            rows[(i, None, True)] += 1
            errors[i] = str(exc)
            continue
        rows.update((i, s, False) for s in found)
        if keep_unmatched and not found:
            rows[(i, None, False)] += 1
    return rows, errors
