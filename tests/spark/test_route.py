"""``route`` on Spark equals in-process ``Matcher.lookup`` pair for pair, in every dialect,
with the native routing and with the plain-SQL baseline."""

from __future__ import annotations

import pickle
import random
from collections import Counter
from collections.abc import Iterator
from typing import cast

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

import topicmatch as tm
from topicmatch.spark import FanoutCounts, fanout_counts, route
from topicmatch.spark import InvalidSubscriptions, subscriptions

from . import randomized as workload

pytestmark = pytest.mark.spark


def frames(spark: SparkSession, subs: list[tuple[str, str]], messages: list[str]) -> tuple[
    DataFrame, DataFrame
]:
    messages_df = spark.createDataFrame(
        [(i, t) for i, t in enumerate(messages)], "id long, topic string"
    ).repartition(3)
    subs_df = spark.createDataFrame(subs, "pattern string, subscriber string")
    return messages_df, subs_df


def routed_rows(out: DataFrame) -> tuple[Counter[workload.Row], dict[int, str]]:
    rows: Counter[workload.Row] = Counter()
    errors = {}
    for r in out.collect():
        rows[(r["id"], r["subscriber"], r["error"] is not None)] += 1
        if r["error"] is not None:
            errors[r["id"]] = r["error"]
    return rows, errors


@pytest.mark.parametrize("dialect", tm.DIALECTS)
@pytest.mark.parametrize("algorithm", ["auto", "sql-baseline"])
def test_route_equals_lookup(spark: SparkSession, dialect: str, algorithm: str) -> None:
    rng = random.Random(f"{dialect}-{algorithm}")
    subs = workload.patterns(dialect, 40, rng)
    messages = workload.topics(dialect, 400, rng)
    messages_df, subs_df = frames(spark, subs, messages)
    # The baseline has no groups: MQTT `$share` texts are matched as their filters there.
    shared = False if algorithm == "sql-baseline" else None
    want, want_errors = workload.expected(dialect, subs, messages, keep_unmatched=True,
                                          shared_subscriptions=shared)
    out = route(messages_df, subs_df, dialect=dialect, algorithm=algorithm, keep_unmatched=True,
                shared_subscriptions=shared)
    assert out.columns == ["id", "topic", "subscriber", "error"]
    got, got_errors = routed_rows(out)
    assert got == want
    assert sum(1 for _, s, e in want if s is not None) > 50  # the workload really matches
    assert want_errors  # ... and has invalid topics
    if algorithm != "sql-baseline":  # the baseline words its own errors
        assert got_errors == want_errors


@pytest.mark.parametrize("dialect", tm.DIALECTS)
def test_unmatched_dropped_by_default(spark: SparkSession, dialect: str) -> None:
    rng = random.Random(dialect)
    subs = [s for s in workload.patterns(dialect, 10, rng) if not tm.matches(s[0], "zz", dialect)]
    messages = [*workload.topics(dialect, 200, rng), "zz"]
    messages_df, subs_df = frames(spark, subs, messages)
    want, _ = workload.expected(dialect, subs, messages, keep_unmatched=False)
    got, _ = routed_rows(route(messages_df, subs_df, dialect=dialect, algorithm="trie"))
    assert got == want
    every = workload.expected(dialect, subs, messages, keep_unmatched=True)[0]
    assert sum(every.values()) > sum(want.values())  # some messages matched nobody


def test_every_message_accounted_for(spark: SparkSession) -> None:
    messages_df = spark.createDataFrame(
        [(0, "a/b"), (1, "a/+"), (2, None), (3, "z"), (4, "a/b")], "id long, topic string"
    )
    subs_df = spark.createDataFrame([("a/#", 7), ("a/b", 7), ("+/b", 9)], "pattern string, "
                                    "subscriber long")
    out = route(messages_df, subs_df, dialect="mqtt", keep_unmatched=True)
    rows = sorted((r["id"], r["subscriber"], r["error"]) for r in out.collect())
    assert [r[:2] for r in rows] == [(0, 7), (0, 9), (1, None), (2, None), (3, None), (4, 7),
                                     (4, 9)]
    assert "wildcards" in rows[2][2] and rows[3][2] == "the topic is null"
    assert rows[4][2] is None
    assert out.schema["subscriber"].dataType.simpleString() == "bigint"


def test_invalid_subscriptions_stop_the_job(spark: SparkSession) -> None:
    messages_df = spark.createDataFrame([("a/b",)], "topic string")
    subs_df = spark.createDataFrame(
        [("a/#", "ok"), ("a/#/b", "bad"), ("+/b", "fine"), (None, "nopattern"), ("x", None)],
        "pattern string, subscriber string",
    )
    with pytest.raises(InvalidSubscriptions) as caught:
        route(messages_df, subs_df, dialect="mqtt")
    assert [row for row, *_ in caught.value.rows] == [1, 3, 4]
    message = str(caught.value)
    assert "3 invalid mqtt subscription(s)" in message
    assert "row 1: pattern 'a/#/b'" in message and "row 3" in message and "row 4" in message
    assert isinstance(caught.value, tm.InvalidPattern)


def test_large_string_topics(spark: SparkSession) -> None:
    rng = random.Random(3)
    subs = workload.patterns("amqp", 20, rng)
    messages = workload.topics("amqp", 200, rng)
    messages_df, subs_df = frames(spark, subs, messages)
    want, want_errors = workload.expected("amqp", subs, messages, keep_unmatched=True)

    def topic_types(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield pa.RecordBatch.from_pydict({"t": [str(batch.column(1).type)]})

    key = "spark.sql.execution.arrow.useLargeVarTypes"
    before = cast(str, spark.conf.get(key))
    try:
        for large in ("true", "false"):
            spark.conf.set(key, large)
            seen = {r["t"] for r in messages_df.mapInArrow(topic_types, "t string").collect()}
            assert seen == ({"large_string"} if large == "true" else {"string"})
            got, got_errors = routed_rows(
                route(messages_df, subs_df, dialect="amqp", keep_unmatched=True)
            )
            assert (got, got_errors) == (want, want_errors)
    finally:
        spark.conf.set(key, before)


def test_fanout_counts(spark: SparkSession) -> None:
    messages_df = spark.createDataFrame(
        [("a/b",), ("a/c",), ("z",), ("a/+",), ("a/b",)], "topic string"
    )
    subs_df = spark.createDataFrame([("a/#", "x"), ("a/b", "y"), ("a/b", "x")],
                                    "pattern string, subscriber string")
    counts = fanout_counts(messages_df, subs_df, dialect="mqtt")
    assert {(r["subscriber"], r["messages"]) for r in counts.per_subscriber.collect()} == {
        ("x", 3), ("y", 2)
    }
    assert [(r["fanout"], r["messages"]) for r in counts.distribution.collect()] == [
        (None, 1), (0, 1), (1, 1), (2, 2)
    ]


def test_rejects_clashing_columns(spark: SparkSession) -> None:
    messages_df = spark.createDataFrame([("a", "e")], "topic string, error string")
    subs_df = spark.createDataFrame([("a", "s")], "pattern string, subscriber string")
    with pytest.raises(ValueError, match="output column"):
        route(messages_df, subs_df, dialect="amqp")


@pytest.mark.parametrize("algorithm", ["naive", "sql-baseline"])
def test_custom_column_names(spark: SparkSession, algorithm: str) -> None:
    messages_df = spark.createDataFrame([("a.b", 1), ("c", 2)], "t string, n int")
    subs_df = spark.createDataFrame([("a.*", 5), ("#", 6)], "p string, who long")
    out = route(messages_df, subs_df, dialect="amqp", algorithm=algorithm, topic_col="t",
                pattern_col="p", subscriber_col="who")
    assert out.columns == ["t", "n", "subscriber", "error"]
    assert sorted((r["n"], r["subscriber"]) for r in out.collect()) == [(1, 5), (1, 6), (2, 6)]


@pytest.mark.parametrize(("dialect", "algorithm"), [("mqtt", "cstrie"), ("amqp", "cstrie"),
                                                    ("nats", "inverted_bitmap")])
def test_route_with_a_result_cache(spark: SparkSession, monkeypatch: pytest.MonkeyPatch,
                                   dialect: str, algorithm: str) -> None:
    rng = random.Random(f"cache-{dialect}")
    subs = workload.patterns(dialect, 40, rng)
    # Each topic three times over, so an executor's cache fills and then answers.
    messages = workload.topics(dialect, 150, rng) * 3
    messages_df, subs_df = frames(spark, subs, messages)
    want, want_errors = workload.expected(dialect, subs, messages, keep_unmatched=True)
    shipped = []
    real_payload = subscriptions.payload

    def recording(matcher: tm.Matcher, values: pa.Array) -> subscriptions.Payload:
        out = real_payload(matcher, values)
        shipped.append(pickle.loads(out.matcher).cache_capacity)  # noqa: S301 (our bytes)
        return out

    monkeypatch.setattr(subscriptions, "payload", recording)
    out = route(messages_df, subs_df, dialect=dialect, algorithm=algorithm, keep_unmatched=True,
                cache_capacity=64)
    assert shipped == [64]  # the executors' matcher carries the cache
    assert routed_rows(out) == (want, want_errors)
    counts = fanout_counts(messages_df, subs_df, dialect=dialect, algorithm=algorithm,
                           cache_capacity=64)
    plain = fanout_counts(messages_df, subs_df, dialect=dialect, algorithm=algorithm)
    def distribution(found: FanoutCounts) -> dict[int | None, int]:
        return {r["fanout"]: r["messages"] for r in found.distribution.collect()}

    assert distribution(counts) == distribution(plain)
    assert sum(distribution(counts).values()) == len(messages)
    assert shipped == [64, 64, None]


@pytest.mark.parametrize(("algorithm", "capacity", "refusal"), [
    ("trie", 64, "cache_capacity applies only to"),
    ("sql-baseline", 64, "does not apply to algorithm 'sql-baseline'"),
    ("cstrie", 0, "must be a positive integer"),
])
def test_route_refuses_a_cache_it_cannot_use(spark: SparkSession, algorithm: str,
                                             capacity: int, refusal: str) -> None:
    messages_df, subs_df = frames(spark, [("a/+", "s")], ["a/b"])
    with pytest.raises(ValueError, match=refusal):
        route(messages_df, subs_df, dialect="mqtt", algorithm=algorithm, cache_capacity=capacity)


@pytest.mark.parametrize("dialect", tm.DIALECTS)
def test_groups_get_one_member_chosen_by_the_topic(spark: SparkSession, dialect: str) -> None:
    rng = random.Random(f"groups-{dialect}")
    subs = workload.patterns(dialect, 40, rng)
    # A `$share` text names its own group.
    groups: list[str | None] = [None if p.startswith("$share/") else rng.choice([None, "g", "h"])
                                for p, _ in subs]
    messages = workload.topics(dialect, 300, rng)
    messages_df = spark.createDataFrame(list(enumerate(messages)), "id long, topic string")
    subs_df = spark.createDataFrame(
        [(p, s, g) for (p, s), g in zip(subs, groups, strict=True)],
        "pattern string, subscriber string, grp string",
    )
    want, _ = workload.expected(dialect, subs, messages, keep_unmatched=True, groups=groups)
    everyone, _ = workload.expected(dialect, subs, messages, keep_unmatched=True,
                                    shared_subscriptions=False if dialect == "mqtt" else None)
    out = route(messages_df, subs_df, dialect=dialect, algorithm="cstrie", keep_unmatched=True,
                group_col="grp")
    got, _ = routed_rows(out)
    assert got == want
    assert sum(want.values()) < sum(everyone.values())  # groups deliver fewer rows
    with pytest.raises(ValueError, match="no groups"):
        route(messages_df, subs_df, dialect=dialect, algorithm="sql-baseline", group_col="grp")
    with pytest.raises(ValueError, match="no column 'nope'"):
        route(messages_df, subs_df, dialect=dialect, group_col="nope")
