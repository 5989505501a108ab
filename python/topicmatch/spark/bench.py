"""The Spark pipeline benchmark: native routing against the plain-SQL baseline, in one run.

    python -m topicmatch.spark.bench                       # the default cases (make bench-spark)
    python -m topicmatch.spark.bench --case trie:1000000:20000 --case floor:1000000:0

Each case is ``algorithm:messages:patterns`` with ``algorithm`` one of ``floor`` (an identity
``mapInArrow``: what Spark itself costs), a topicmatch algorithm (or ``auto``) or
``sql-baseline``. Messages are the seed5 MQTT demo topics, generated once per size and cached
in memory before timing; subscriptions are seed5 patterns. A case's time covers ``route`` (the
driver collecting, checking and broadcasting the subscriptions) and a ``noop`` write that
computes every output row. The best of ``--repeat`` runs is reported, with its ratio to the
``floor`` row of the same message count.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from topicmatch import workloads
from topicmatch.spark.routing import route
from topicmatch.spark.session import session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_CASES = (
    "floor:1000000:0",
    "auto:1000000:200",
    "auto:1000000:2000",
    "auto:1000000:20000",
    "sql-baseline:100000:2000",
    "sql-baseline:1000000:200",
)


def _identity(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield from batches


def _messages(spark: SparkSession, count: int, partitions: int) -> DataFrame:
    import pandas as pd

    topics = workloads.seed5_topics(count, dialect="mqtt")
    df = spark.createDataFrame(pd.DataFrame({"id": range(count), "topic": topics}))
    df = df.repartition(partitions).cache()
    df.count()
    return df


def _subscriptions(spark: SparkSession, count: int) -> DataFrame:
    import pandas as pd

    patterns = workloads.seed5_patterns(count, dialect="mqtt")
    return spark.createDataFrame(pd.DataFrame({"pattern": patterns, "subscriber": range(count)}))


def run_case(spark: SparkSession, messages: DataFrame, algorithm: str, patterns: int) -> float:
    started = time.perf_counter()
    if algorithm == "floor":
        out = messages.mapInArrow(_identity, messages.schema)
    else:
        out = route(messages, _subscriptions(spark, patterns), dialect="mqtt",
                    algorithm=algorithm)
    out.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m topicmatch.spark.bench",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", help="algorithm:messages:patterns")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    cases = [(a, int(m), int(p)) for a, m, p in (c.split(":") for c in args.case or DEFAULT_CASES)]
    spark = session(args.master, app_name="topicmatch-bench",
                    config={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    partitions = spark.sparkContext.defaultParallelism
    floors: dict[int, float] = {}
    cached: dict[int, DataFrame] = {}
    print(f"master {args.master}, {partitions} partitions, best of {args.repeat}")
    print(f"{'algorithm':<14}{'messages':>10}{'patterns':>10}{'seconds':>10}{'msg/s':>12}"
          f"{'x floor':>9}")
    for algorithm, count, patterns in cases:
        if count not in cached:
            cached[count] = _messages(spark, count, partitions)
        repeat = 1 if algorithm == "sql-baseline" else args.repeat
        best = min(run_case(spark, cached[count], algorithm, patterns) for _ in range(repeat))
        if algorithm == "floor":
            floors[count] = best
        ratio = f"{best / floors[count]:.1f}" if count in floors else "-"
        print(f"{algorithm:<14}{count:>10,}{patterns:>10,}{best:>10.2f}{count / best:>12,.0f}"
              f"{ratio:>9}", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
