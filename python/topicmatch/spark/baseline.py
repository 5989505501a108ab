"""``algorithm="sql-baseline"``: the same routing in plain Spark SQL, as a user would write it
without topicmatch (each pattern a Java regular expression, an ``rlike`` cross join). Kept as
the benchmark's baseline and checked against the native routing in the tests."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import topicmatch as tm
from topicmatch.spark.subscriptions import SubscriptionSet

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

_SEPARATOR = {"amqp": ".", "mqtt": "/", "nats": "."}
_ONE = {"amqp": "*", "mqtt": "+", "nats": "*"}
_MULTI = {"amqp": "#", "mqtt": "#", "nats": ">"}


def _literal(text: str) -> str:
    """``text`` as a Java regex matching exactly it (``\\x{..}`` for all but ``[A-Za-z0-9_]``)."""
    return "".join(
        c if c.isascii() and (c.isalnum() or c == "_") else f"\\x{{{ord(c):X}}}" for c in text
    )


def pattern_regex(pattern: str, dialect: str) -> str:
    """A Java regex for a (valid) pattern, matched against the topic with a separator put in
    front of every word (see :func:`_key`), so that each word is ``<sep><text>``."""
    sep = _SEPARATOR[dialect]
    s, word = _literal(sep), f"[^{_literal(sep)}]"
    if dialect == "mqtt" and pattern.startswith("$share/"):
        pattern = pattern.split("/", 2)[2]  # a shared subscription is matched as its filter
    words = pattern.split(sep) if pattern else []  # "" is zero words (only AMQP allows it)
    parts = []
    for w in words:
        if w == _ONE[dialect]:
            parts.append(f"{s}{word}+" if dialect == "nats" else f"{s}{word}*")
        elif w == _MULTI[dialect]:
            # AMQP: zero or more words anywhere; MQTT: the parent and any children (so zero or
            # more more levels); NATS: one or more tokens.
            parts.append(f"(?:{s}{word}+)+" if dialect == "nats" else f"(?:{s}{word}*)*")
        else:
            parts.append(s + _literal(w))
    # MQTT: a filter starting with a wildcard does not match topics starting with '$'.
    guard = "(?!/\\x{24})" if dialect == "mqtt" and words and words[0] in ("+", "#") else ""
    return f"^{guard}{''.join(parts)}\\z"


def _key(topic: Column, dialect: str) -> Column:
    from pyspark.sql import functions as F

    keyed = F.concat(F.lit(_SEPARATOR[dialect]), topic)
    if dialect == "amqp":  # the empty routing key has no words
        return F.when(topic == "", F.lit("")).otherwise(keyed)
    return keyed


def _topic_error(topic: Column, dialect: str) -> Column:
    """Why a topic is invalid under the dialect's default limits, else null (the same rules
    as the engine; the wording is this module's own)."""
    from pyspark.sql import functions as F

    sep = _SEPARATOR[dialect]
    limits = tm.Matcher(dialect=dialect).limits
    max_bytes, max_levels = int(limits["max_topic_bytes"] or 0), int(limits["max_levels"] or 0)
    levels = F.length(topic) - F.length(F.replace(topic, F.lit(sep), F.lit(""))) + 1
    rules = [
        (topic.isNull(), "the topic is null"),
        (F.octet_length(topic) > max_bytes, "the topic is too long"),
        (levels > max_levels, "the topic has too many levels"),
    ]
    if dialect == "mqtt":
        rules += [
            (topic == "", "a topic name must not be empty"),
            (topic.rlike("[+#]"), "a topic name must not contain '+' or '#'"),
            (F.instr(topic, "\x00") > 0, "a topic name must not contain U+0000"),
        ]
    elif dialect == "nats":
        rules += [
            (topic == "", "a subject must not be empty"),
            (topic.rlike("^\\.|\\.\\z|\\.\\."), "tokens must not be empty"),
            (topic.rlike("(^|\\.)[*>](\\.|\\z)"), "a subject must not contain a wildcard token"),
            (topic.rlike("[ \\t\\n\\r\\f]"), "subjects must not contain whitespace"),
            (F.instr(topic, "\x00") > 0, "subjects must not contain U+0000"),
        ]
    error = F.lit(None).cast("string")
    for condition, reason in reversed(rules):
        error = F.when(condition, F.lit(f"invalid {dialect} topic: {reason}")).otherwise(error)
    return error


def route_sql(
    messages_df: DataFrame,
    subs: SubscriptionSet,
    subscriber_type: DataType,
    *,
    dialect: str,
    topic_col: str,
    keep_unmatched: bool,
) -> DataFrame:
    """``route`` in Spark SQL: one regex per subscriber (its patterns as alternatives, so each
    subscriber appears once per message), broadcast, ``rlike`` in a nested-loop join."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    spark = messages_df.sparkSession
    by_subscriber: dict[int, list[str]] = defaultdict(list)
    for pattern, index in zip(subs.patterns, subs.indices, strict=True):
        by_subscriber[index].append(f"(?:{pattern_regex(pattern, dialect)})")
    values = subs.values.to_pylist()
    patterns_df = spark.createDataFrame(
        [("|".join(regexes), values[i]) for i, regexes in by_subscriber.items()],
        StructType([
            StructField("_tm_regex", StringType(), False),
            StructField("subscriber", subscriber_type, True),
        ]),
    )
    columns = [F.col(f"`{c}`") for c in messages_df.columns]
    checked = messages_df.withColumn("_tm_error", _topic_error(F.col(f"`{topic_col}`"), dialect))
    valid = checked.where(F.col("_tm_error").isNull()).withColumn(
        "_tm_key", _key(F.col(f"`{topic_col}`"), dialect)
    )
    matched = valid.join(
        F.broadcast(patterns_df),
        F.expr("_tm_key rlike _tm_regex"),
        "left" if keep_unmatched else "inner",
    ).select(*columns, "subscriber", F.lit(None).cast("string").alias("error"))
    invalid = checked.where(F.col("_tm_error").isNotNull()).select(
        *columns,
        F.lit(None).cast(subscriber_type).alias("subscriber"),
        F.col("_tm_error").alias("error"),
    )
    return matched.unionByName(invalid)
