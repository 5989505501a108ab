"""``route`` and ``fanout_counts``: the public Spark API."""

from __future__ import annotations

import functools
import pickle
import unicodedata
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import pyarrow as pa

import topicmatch as tm
from topicmatch.spark import subscriptions
from topicmatch.spark._arrow import route_array, subscriber_values

if TYPE_CHECKING:
    from pyspark import Broadcast
    from pyspark.sql import DataFrame

#: The name of the plain Spark SQL routing (regular expressions, ``rlike`` cross join).
SQL_BASELINE = "sql-baseline"

#: Matchers built in this Python worker, by payload key (a worker serves many tasks).
_WORKER_CACHE: dict[str, tuple[tm.Matcher, pa.Int64Array, pa.Array]] = {}
_WORKER_CACHE_SIZE = 4


def check_cache(dialect: str, algorithm: str, cache_capacity: int | None) -> None:
    """Raises ``ValueError`` if ``cache_capacity`` cannot be given to ``algorithm``: the
    matcher's own rule and message (``sql-baseline`` has no matcher). Cheap: run it before any
    Spark work."""
    if cache_capacity is None:
        return
    if algorithm == SQL_BASELINE:
        raise ValueError(f"cache_capacity does not apply to algorithm {SQL_BASELINE!r}")
    tm.Matcher(dialect=dialect, algorithm=subscriptions.resolve_algorithm(algorithm),
               cache_capacity=cache_capacity)


def _worker_matcher(key: str, broadcast: Broadcast[subscriptions.Payload]) -> tuple[
    tm.Matcher, pa.Int64Array, pa.Array
]:
    """The matcher of ``key``, its subscriber table and the subscriber values, unpickled from
    the broadcast only on this worker's first task."""
    hit = _WORKER_CACHE.get(key)
    if hit is None:
        payload = broadcast.value
        matcher = pickle.loads(payload.matcher)  # noqa: S301 (our own bytes)
        hit = (matcher, subscriber_values(matcher), payload.values)
        while len(_WORKER_CACHE) >= _WORKER_CACHE_SIZE:
            _WORKER_CACHE.pop(next(iter(_WORKER_CACHE)))
        _WORKER_CACHE[key] = hit
    return hit


def _route_batches(
    batches: Iterator[pa.RecordBatch],
    *,
    key: str,
    broadcast: Broadcast[subscriptions.Payload],
    topic_index: int,
    keep_unmatched: bool,
    names: list[str],
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: one native call per batch, the output built with ``take``."""
    matcher, table, values = _worker_matcher(key, broadcast)
    for batch in batches:
        routed = route_array(matcher, batch.column(topic_index), keep_unmatched=keep_unmatched,
                             values=table)
        taken = batch.take(routed.rows)
        yield pa.RecordBatch.from_arrays(
            [*taken.columns, values.take(routed.subscribers), routed.errors], names=names
        )


class MissingColumn(ValueError):
    """A frame lacks the column a ``route`` keyword names: ``option`` is that keyword
    (``topic_col``), ``columns`` the frame's."""

    def __init__(self, side: str, column: str, option: str, columns: list[str]) -> None:
        if not columns:
            listed = "(no columns at all: an empty input?)"
        elif any(map(_not_text, columns)):
            # A binary file read as CSV gives its first bytes as column names: not worth
            # printing, and they can garble the terminal.
            listed = (f"(its first line is not text, {len(columns)} column(s): binary data read "
                      "as CSV or JSON Lines?)")
        else:
            listed = f"(columns: {columns})"
        super().__init__(f"the {side} have no column {column!r} {listed}")
        self.option = option
        self.columns = columns


def _not_text(name: str) -> bool:
    """Whether a column name holds what no text header does: U+FFFD (bytes that were not
    UTF-8) or a control character other than a tab."""
    return any(c == "\ufffd" or (unicodedata.category(c) == "Cc" and c != "\t") for c in name)


def _check_columns(
    messages_df: DataFrame, subscriptions_df: DataFrame, topic_col: str, pattern_col: str,
    subscriber_col: str,
) -> None:
    from pyspark.sql.types import StringType

    fields = {f.name: f.dataType for f in messages_df.schema.fields}
    if topic_col not in fields:
        raise MissingColumn("messages", topic_col, "topic_col", list(fields))
    if not isinstance(fields[topic_col], StringType):
        raise TypeError(f"the topic column {topic_col!r} must be a string, not {fields[topic_col]}")
    clash = {"subscriber", "error"} & set(fields)
    if clash:
        raise ValueError(f"the messages already have the output column(s) {sorted(clash)}")
    for col, option in ((pattern_col, "pattern_col"), (subscriber_col, "subscriber_col")):
        if col not in subscriptions_df.columns:
            raise MissingColumn("subscriptions", col, option, subscriptions_df.columns)


def route(
    messages_df: DataFrame,
    subscriptions_df: DataFrame,
    dialect: str,
    algorithm: str = "auto",
    topic_col: str = "topic",
    pattern_col: str = "pattern",
    subscriber_col: str = "subscriber",
    keep_unmatched: bool = False,
    cache_capacity: int | None = None,
    group_col: str | None = None,
    shared_subscriptions: bool | None = None,
) -> DataFrame:
    """Routes every message to the subscribers whose pattern matches its topic.

    The result has every message column plus ``subscriber`` and ``error``: one row per
    (message, matching subscriber); one row with ``subscriber`` null and ``error`` set for a
    message whose topic is invalid; with ``keep_unmatched``, one row with both null for a message
    that matches nobody. The subscriptions are validated on the driver first: any invalid row
    raises :class:`~topicmatch.spark.subscriptions.InvalidSubscriptions` listing the rows.

    ``algorithm`` is a name in ``topicmatch.ALGORITHMS``, ``"auto"`` (the best one) or
    ``"sql-baseline"`` (plain Spark SQL, the benchmark baseline).

    ``cache_capacity`` gives each executor's matcher a per-topic cache of that many entries
    (``algorithm`` ``"cstrie"`` or ``"inverted_bitmap"``; see ``topicmatch.Matcher``): archives
    that repeat topics are routed faster, with the same result. Any other algorithm, or a
    capacity below 1, raises ``ValueError`` on the driver before any work starts.

    Groups (shared subscriptions, queue groups): ``group_col`` names a column of group names
    (null: a plain subscription); in MQTT a ``$share/{group}/{filter}`` pattern is a group
    member too unless ``shared_subscriptions`` is ``False``. A message goes to one member of
    each matching group, chosen by the topic's hash (``group_policy="hash"``), so the output is
    deterministic: the same topic reaches the same member on every executor and every run over
    the same subscription rows. Members join in the order the rows are collected, and the hash
    picks by that order: the same rows in another order (a file rewritten or repartitioned) may
    send a topic to another member.
    ``sql-baseline`` has no groups and refuses such subscriptions.
    """
    from pyspark.sql.types import StringType, StructField, StructType

    if dialect not in tm.DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}: expected one of {tm.DIALECTS}")
    _check_columns(messages_df, subscriptions_df, topic_col, pattern_col, subscriber_col)
    if group_col is not None and group_col not in subscriptions_df.columns:
        raise MissingColumn("subscriptions", group_col, "group_col", subscriptions_df.columns)
    check_cache(dialect, algorithm, cache_capacity)
    subs = subscriptions.collect(
        subscriptions_df, dialect=dialect, pattern_col=pattern_col, subscriber_col=subscriber_col,
        group_col=group_col, shared_subscriptions=shared_subscriptions,
    )
    if algorithm == SQL_BASELINE:
        from topicmatch.spark import baseline

        if subscriptions.has_groups(subs, dialect, shared_subscriptions):
            raise ValueError(f"{SQL_BASELINE!r} delivers to every subscriber: it has no groups "
                             "(pass shared_subscriptions=False to match $share texts as "
                             "their filters)")

        return baseline.route_sql(
            messages_df, subs, subscriptions_df.schema[subscriber_col].dataType,
            dialect=dialect, topic_col=topic_col, keep_unmatched=keep_unmatched,
        )
    matcher = subscriptions.build_matcher(
        subs, dialect=dialect, algorithm=algorithm, cache_capacity=cache_capacity,
        shared_subscriptions=shared_subscriptions,
    )
    payload = subscriptions.payload(matcher, subs.values)
    broadcast = messages_df.sparkSession.sparkContext.broadcast(payload)
    schema = StructType([
        *messages_df.schema.fields,
        StructField("subscriber", subscriptions_df.schema[subscriber_col].dataType, True),
        StructField("error", StringType(), True),
    ])
    work = functools.partial(
        _route_batches,
        key=payload.key,
        broadcast=broadcast,
        topic_index=messages_df.columns.index(topic_col),
        keep_unmatched=keep_unmatched,
        names=schema.fieldNames(),
    )
    return messages_df.mapInArrow(work, schema)


class FanoutCounts(NamedTuple):
    """``per_subscriber``: ``subscriber``, ``messages`` (how many messages each receives).
    ``distribution``: ``fanout``, ``messages`` (how many messages reach exactly ``fanout``
    subscribers; ``fanout`` null counts the messages whose topic is invalid)."""

    per_subscriber: DataFrame
    distribution: DataFrame


def fanout_counts(
    messages_df: DataFrame,
    subscriptions_df: DataFrame,
    dialect: str,
    algorithm: str = "auto",
    topic_col: str = "topic",
    pattern_col: str = "pattern",
    subscriber_col: str = "subscriber",
    cache_capacity: int | None = None,
    group_col: str | None = None,
    shared_subscriptions: bool | None = None,
) -> FanoutCounts:
    """Fan-out of a routing: per subscriber the number of messages, and the distribution of the
    number of subscribers per message (every message counted, unmatched ones at 0).
    ``cache_capacity`` is as for :func:`route`."""
    from pyspark.sql import functions as F

    message_id = "_tm_message"
    routed = route(
        messages_df.withColumn(message_id, F.monotonically_increasing_id()), subscriptions_df,
        dialect=dialect, algorithm=algorithm, topic_col=topic_col, pattern_col=pattern_col,
        subscriber_col=subscriber_col, keep_unmatched=True, cache_capacity=cache_capacity,
        group_col=group_col, shared_subscriptions=shared_subscriptions,
    )
    per_subscriber = (
        routed.where(F.col("subscriber").isNotNull())
        .groupBy("subscriber")
        .agg(F.count("*").alias("messages"))
    )
    per_message = routed.groupBy(message_id).agg(
        F.when(F.max(F.col("error").isNotNull()), F.lit(None))
        .otherwise(F.count("subscriber"))
        .alias("fanout")
    )
    distribution = (
        per_message.groupBy("fanout").agg(F.count("*").alias("messages")).orderBy("fanout")
    )
    return FanoutCounts(per_subscriber, distribution)
