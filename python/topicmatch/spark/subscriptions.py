"""The driver side: collect, validate and package the subscription set once per job."""

from __future__ import annotations

import hashlib
import pickle
from typing import TYPE_CHECKING, Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

import topicmatch as tm

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: How many offending rows an InvalidSubscriptions message lists.
SHOWN_ROWS = 20


class InvalidSubscriptions(tm.InvalidPattern):
    """Subscription rows that cannot be routed; ``rows`` lists ``(row, pattern, subscriber,
    reason)`` for each. Raised on the driver before any work starts."""

    def __init__(self, dialect: str, rows: list[tuple[int, Any, Any, str]]) -> None:
        self.rows = rows
        shown = "\n".join(
            f"  row {row}: pattern {pattern!r} subscriber {subscriber!r}: {reason}"
            for row, pattern, subscriber, reason in rows[:SHOWN_ROWS]
        )
        more = f"\n  ... and {len(rows) - SHOWN_ROWS} more" if len(rows) > SHOWN_ROWS else ""
        super().__init__(f"{len(rows)} invalid {dialect} subscription(s):\n{shown}{more}")


class SubscriptionSet(NamedTuple):
    """A validated subscription set: ``patterns[i]`` belongs to ``values[indices[i]]``, where
    ``values`` are the distinct subscriber values (an Arrow array of the column's type), as a
    member of group ``groups[i]`` if that is not ``None``."""

    patterns: list[str]
    indices: list[int]
    values: pa.Array
    groups: list[str | None]


def resolve_algorithm(algorithm: str) -> str:
    """``auto`` is the best algorithm this build has (``trie`` if it has no ``auto``)."""
    if algorithm == "auto" and "auto" not in tm.ALGORITHMS:
        return "trie"
    return algorithm


def collect(
    subscriptions_df: DataFrame, *, dialect: str, pattern_col: str, subscriber_col: str,
    group_col: str | None = None, shared_subscriptions: bool | None = None,
) -> SubscriptionSet:
    """Collects the subscriptions to the driver and checks every row (null cells included; a
    null group is a plain subscription), raising :class:`InvalidSubscriptions` that lists the
    rows at fault."""
    columns = [pattern_col, subscriber_col, *([group_col] if group_col else [])]
    table = subscriptions_df.select(*columns).toArrow()
    patterns = table.column(0).to_pylist()
    groups: list[str | None] = (
        table.column(2).to_pylist() if group_col else [None] * len(patterns)
    )
    subscribers = table.column(1)
    values = pc.unique(subscribers.combine_chunks().drop_null())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    indices = pc.index_in(subscribers, value_set=values).to_pylist()
    checker = tm.Matcher(dialect=dialect, algorithm="naive",
                         shared_subscriptions=shared_subscriptions)
    bad: list[tuple[int, Any, Any, str]] = []
    for row, (pattern, index, group) in enumerate(zip(patterns, indices, groups, strict=True)):
        reason = None
        if pattern is None:
            reason = "the pattern is null"
        elif index is None:
            reason = "the subscriber is null"
        else:
            try:
                checker.subscribe(pattern, 0, group=group)
            except (ValueError, TypeError) as exc:
                reason = str(exc)
        if reason is not None:
            bad.append((row, pattern, subscribers[row].as_py(), reason))
    if bad:
        raise InvalidSubscriptions(dialect, bad)
    return SubscriptionSet(patterns, indices, values, groups)


def has_groups(subs: SubscriptionSet, dialect: str, shared_subscriptions: bool | None) -> bool:
    """Whether some subscription is a group member (a group given, or an MQTT
    ``$share/{group}/{filter}`` text while shared subscriptions are on)."""
    shared = dialect == "mqtt" if shared_subscriptions is None else shared_subscriptions
    return any(g is not None for g in subs.groups) or (
        shared and any(p.startswith("$share/") for p in subs.patterns))


def build_matcher(
    subs: SubscriptionSet, *, dialect: str, algorithm: str, cache_capacity: int | None = None,
    shared_subscriptions: bool | None = None,
) -> tm.Matcher:
    """A matcher whose subscribers are the indices into ``subs.values``, with a per-topic cache
    of ``cache_capacity`` entries if given (``cstrie`` and ``inverted_bitmap`` only; any other
    algorithm raises ``ValueError``). A group's member is chosen by the topic's hash
    (``group_policy="hash"``): every executor, and every rerun, sends a topic to the same
    member."""
    matcher = tm.Matcher(
        dialect=dialect, algorithm=resolve_algorithm(algorithm), cache_capacity=cache_capacity,
        shared_subscriptions=shared_subscriptions, group_policy="hash",
    )
    for pattern, index, group in zip(subs.patterns, subs.indices, subs.groups, strict=True):
        matcher.subscribe(pattern, index, group=group)
    return matcher


class Payload(NamedTuple):
    """What the executors receive once, by broadcast: the pickled matcher and the subscriber
    values. ``key`` (a hash of both) names it in each worker's cache."""

    key: str
    matcher: bytes
    values: pa.Array


def payload(matcher: tm.Matcher, values: pa.Array) -> Payload:
    blob = pickle.dumps(matcher, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(blob)
    digest.update(pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL))
    return Payload(digest.hexdigest(), blob, values)
