"""The main job behind ``topicmatch route``: read messages and subscriptions, route them on
Spark, write the result and report messages, matches, errors and throughput."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from topicmatch import workloads
from topicmatch.spark.routing import SQL_BASELINE, check_cache, route
from topicmatch.spark.session import session
from topicmatch.spark.subscriptions import InvalidSubscriptions, resolve_algorithm

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

from topicmatch.cli import ROUTE_FORMATS as FORMATS
_EXTENSIONS = {
    ".parquet": "parquet", ".pq": "parquet", ".csv": "csv",
    ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
}


def input_format(path: str, override: str | None) -> str:
    """The format of ``path``: ``override`` if given, else by extension (a folder of Parquet
    files, as Spark writes them, is Parquet)."""
    if override:
        return override
    suffix = Path(path).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if Path(path).is_dir():
        return "parquet"
    raise ValueError(f"cannot tell the format of {path!r}: pass --input-format {'|'.join(FORMATS)}")


def read(spark: SparkSession, path: str, fmt: str) -> DataFrame:
    if fmt == "parquet":
        return spark.read.parquet(path)
    if fmt == "csv":
        return spark.read.option("header", True).csv(path)
    return spark.read.json(path)


def write(df: DataFrame, path: str, fmt: str) -> None:
    writer = df.write.mode("overwrite")
    if fmt == "parquet":
        writer.parquet(path)
    elif fmt == "csv":
        writer.option("header", True).csv(path)
    else:
        writer.json(path)


def read_back(spark: SparkSession, df: DataFrame, path: str, fmt: str) -> DataFrame:
    reader = spark.read.schema(df.schema)
    if fmt == "parquet":
        return reader.parquet(path)
    if fmt == "csv":
        return reader.option("header", True).csv(path)
    return reader.json(path)


def demo_messages(spark: SparkSession, count: int, dialect: str) -> DataFrame:
    import pandas as pd

    topics = workloads.seed5_topics(count, dialect=dialect)
    return spark.createDataFrame(pd.DataFrame({"id": range(count), "topic": topics}))


def demo_subscriptions(spark: SparkSession, count: int, dialect: str) -> DataFrame:
    import pandas as pd

    patterns = workloads.seed5_patterns(count, dialect=dialect)
    subscribers = [f"sub-{i}" for i in range(count)]
    return spark.createDataFrame(pd.DataFrame({"pattern": patterns, "subscriber": subscribers}))


def cache_refused(args: argparse.Namespace) -> str | None:
    """Why ``--cache-capacity`` cannot be used with these arguments, if it cannot: ``route``'s
    own check, run before Spark starts, worded with the command's flags for ``sql-baseline``."""
    if args.cache_capacity is not None and args.algorithm == SQL_BASELINE:
        return "--cache-capacity does not apply to --algorithm sql-baseline"
    try:
        check_cache(args.dialect, args.algorithm, args.cache_capacity)
    except ValueError as exc:
        return str(exc)
    return None


def run(args: argparse.Namespace) -> int:
    """Runs the job described by the parsed ``topicmatch route`` arguments."""
    from pyspark.sql import functions as F

    refused = cache_refused(args)
    if refused:
        print(f"topicmatch route: {refused}")
        return 2
    spark = session(args.master, config={"spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    if args.messages:
        messages = read(spark, args.messages, input_format(args.messages, args.input_format))
        source = args.messages
    else:
        messages = demo_messages(spark, args.demo_messages, args.dialect)
        source = f"the seed5 demo ({args.demo_messages:,} messages)"
    if args.subscriptions:
        subs = read(spark, args.subscriptions,
                    input_format(args.subscriptions, args.input_format))
    else:
        subs = demo_subscriptions(spark, args.demo_subscriptions, args.dialect)
    try:
        routed = route(
            messages, subs, dialect=args.dialect, algorithm=args.algorithm,
            topic_col=args.topic_col, pattern_col=args.pattern_col,
            subscriber_col=args.subscriber_col, keep_unmatched=args.keep_unmatched,
            cache_capacity=args.cache_capacity,
        )
    except InvalidSubscriptions as exc:
        print(exc)
        return 2
    started = time.perf_counter()
    write(routed, args.out, args.format)
    elapsed = time.perf_counter() - started
    total = messages.count()
    written = read_back(spark, routed, args.out, args.format)
    stats = written.agg(F.count("subscriber").alias("matches"), F.count("error").alias("errors"))
    row = stats.first()
    matches, errors = (row["matches"], row["errors"]) if row else (0, 0)
    algorithm = args.algorithm if args.algorithm == SQL_BASELINE else resolve_algorithm(
        args.algorithm
    )
    cache = "" if args.cache_capacity is None else f", cache {args.cache_capacity:,}"
    print(f"routed {source} against {subs.count():,} subscriptions "
          f"({args.dialect}, {algorithm}{cache}, {args.master})")
    print(f"messages {total:,}  matches {matches:,}  errors {errors:,}  "
          f"{total / elapsed:,.0f} messages/s ({elapsed:.3f} s)")
    print(f"wrote {args.format} to {Path(args.out).resolve()}")
    return 0
