"""The Spark pipeline benchmark: native routing against the plain-SQL baseline, in one run.

    python -m topicmatch.spark.bench                       # the default cases (make bench-spark)
    python -m topicmatch.spark.bench --case trie:1000000:20000 --case floor:1000000:0

Each case is ``algorithm:messages:patterns[:workload]`` with ``algorithm`` one of ``floor``
(an identity ``mapInArrow``: what Spark itself costs), a topicmatch algorithm (or ``auto``) or
``sql-baseline``. Messages are MQTT topics of the five-level demo space from "Fast topic
matching" (OpenAMQ), generated once per size and cached in memory before timing.
Subscriptions are patterns over the same words: workload ``seed5`` is the demo's mix (a
quarter of the words ``+``, 5% ending in ``#``); the demo space has only 7,560 distinct topics,
so its fan-out grows with the pattern count (about 30 subscribers per message at 2,000).
``selective`` has 2% ``+`` words and 0.2% ``#`` patterns, for a fan-out nearer real archives.
The ``fan-out`` column is the mean number of subscribers per message (from 5,000 messages). A case's time covers ``route`` (the
driver collecting, checking and broadcasting the subscriptions) and a ``noop`` write that
computes every output row. Each message count gets one untimed warm-up run; the best of
``--repeat`` runs is reported, with its ratio to the ``floor`` row of the same message count.
The plain-SQL baseline costs one regex match per (message, subscriber) pair, so the default
cases measure it at 100,000 x 200 and 20,000 x 2,000 beside topicmatch at the same sizes.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

import topicmatch as tm
from topicmatch import workloads
from topicmatch.spark.routing import route
from topicmatch.spark.session import session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_CASES = (
    "floor:1000000:0",
    "auto:1000000:200",
    "auto:1000000:2000",
    "auto:1000000:2000:selective",
    "auto:1000000:20000:selective",
    "floor:100000:0",
    "auto:100000:200",
    "sql-baseline:100000:200",
    "floor:20000:0",
    "auto:20000:2000",
    "sql-baseline:20000:2000",
)
#: (share of ``+`` words, share of ``#`` patterns) of each pattern workload.
WORKLOADS = {"seed5": (0.25, 0.05), "selective": (0.02, 0.002)}


def _identity(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield from batches


def _messages(spark: SparkSession, count: int, partitions: int) -> DataFrame:
    import pandas as pd

    topics = workloads.demo_topics(count, dialect="mqtt")
    df = spark.createDataFrame(pd.DataFrame({"id": range(count), "topic": topics}))
    df = df.repartition(partitions).cache()
    df.count()
    return df


def _patterns(count: int, workload: str) -> list[str]:
    one, multi = WORKLOADS[workload]
    return workloads.demo_patterns(count, dialect="mqtt", one_share=one, multi_share=multi)


def fanout(patterns: list[str]) -> float:
    """Mean subscribers per message, in process, on 5,000 of the benchmark's messages."""
    matcher = tm.Matcher(dialect="mqtt")
    for i, pattern in enumerate(patterns):
        matcher.subscribe(pattern, i)
    topics = workloads.demo_topics(5000, dialect="mqtt")
    return sum(len(found) for found in matcher.lookup_many(topics)) / len(topics)


def run_case(spark: SparkSession, messages: DataFrame, algorithm: str,
             patterns: list[str], cache_capacity: int | None = None) -> float:
    import pandas as pd

    started = time.perf_counter()
    if algorithm == "floor":
        out = messages.mapInArrow(_identity, messages.schema)
    else:
        subs = spark.createDataFrame(
            pd.DataFrame({"pattern": patterns, "subscriber": range(len(patterns))})
        )
        out = route(messages, subs, dialect="mqtt", algorithm=algorithm,
                    cache_capacity=cache_capacity)
    out.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m topicmatch.spark.bench",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", help="algorithm:messages:patterns")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cache-capacity", type=int, metavar="N",
                        help="a per-topic cache of N entries for every topicmatch case (each "
                        "case's algorithm must take one: cstrie, inverted_bitmap)")
    args = parser.parse_args(argv)
    cases = []
    for case in args.case or DEFAULT_CASES:
        algorithm, messages, patterns, *workload = case.split(":")
        cases.append((algorithm, int(messages), int(patterns), workload[0] if workload else "seed5"))
    spark = session(args.master, app_name="topicmatch-bench",
                    config={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
                            "spark.ui.showConsoleProgress": "false"},
                    spark_log="ERROR")
    partitions = spark.sparkContext.defaultParallelism
    floors: dict[int, float] = {}
    cached: dict[int, DataFrame] = {}
    print(f"master {args.master}, {partitions} partitions, best of {args.repeat}")
    print(f"{'algorithm':<14}{'messages':>10}{'patterns':>10} {'workload':<10}{'fan-out':>8}"
          f"{'seconds':>10}{'msg/s':>12}{'x floor':>9}")
    for algorithm, count, size, workload in cases:
        if count not in cached:
            cached[count] = _messages(spark, count, partitions)
            run_case(spark, cached[count], "floor", [])  # warm-up, not reported
        patterns = _patterns(size, workload)
        mean = fanout(patterns) if patterns else 1.0
        repeat = 1 if algorithm == "sql-baseline" else args.repeat
        cache = None if algorithm in ("floor", "sql-baseline") else args.cache_capacity
        best = min(run_case(spark, cached[count], algorithm, patterns, cache)
                   for _ in range(repeat))
        if algorithm == "floor":
            floors[count] = best
        ratio = f"{best / floors[count]:.1f}" if count in floors else "-"
        print(f"{algorithm:<14}{count:>10,}{size:>10,} {workload:<10}{mean:>8.2f}{best:>10.2f}"
              f"{count / best:>12,.0f}{ratio:>9}", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
