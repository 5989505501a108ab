"""The main job behind ``topicmatch route``: read messages and subscriptions, route them on
Spark, write the result and report messages, matches, errors and throughput.

Whatever goes wrong ends in one line on standard error (the subscription rows at fault for
invalid subscriptions) and a non-zero exit status: 2 for the input (a missing or unreadable
file, a format Spark cannot read, a missing column, invalid subscriptions), 1 for a job that
fails once started."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from topicmatch import workloads
from topicmatch.formats import format_hint, input_format, local_path
from topicmatch.spark.routing import SQL_BASELINE, MissingColumn, check_cache, route
from topicmatch.spark.session import session
from topicmatch.spark.subscriptions import resolve_algorithm

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession


class InputError(Exception):
    """An input the job cannot read; the message is the one line the user sees."""


#: CSV has no null: a field left empty (``1,``) reads as null, a quoted empty one (``1,""``)
#: as the empty string (AMQP's empty routing key and pattern are valid), as Spark writes them.
#: Spark reads a field equal to its ``nullValue`` as null, and with the default (the empty
#: string) the quoted empty field too; a text no real field holds keeps the two apart.
CSV_NULL_VALUE = "\ue000topicmatch: no text reads as null\ue000"


def read(spark: SparkSession, path: str, fmt: str) -> DataFrame:
    return _load(spark.read, path, fmt)


def _load(reader: DataFrameReader, path: str, fmt: str) -> DataFrame:
    """``path`` in ``fmt`` through ``reader``: the one way the job reads its inputs and its
    output back."""
    if fmt == "parquet":
        return reader.parquet(path)
    if fmt == "csv":
        return reader.option("header", True).option("nullValue", CSV_NULL_VALUE).csv(path)
    return reader.json(path)


def write(df: DataFrame, path: str, fmt: str) -> None:
    writer = df.write.mode("overwrite")
    if fmt == "parquet":
        writer.parquet(path)
    elif fmt == "csv":
        writer.option("header", True).csv(path)
    else:
        writer.json(path)


def read_back(spark: SparkSession, df: DataFrame, path: str, fmt: str) -> DataFrame:
    return _load(spark.read.schema(df.schema), path, fmt)


def demo_messages(spark: SparkSession, count: int, dialect: str) -> DataFrame:
    """``count`` random topics of five levels (product, market, currency, side, timing)."""
    import pandas as pd

    topics = workloads.demo_topics(count, dialect=dialect)
    return spark.createDataFrame(pd.DataFrame({"id": range(count), "topic": topics}))


def demo_subscriptions(spark: SparkSession, count: int, dialect: str) -> DataFrame:
    """``count`` patterns over the demo topics' words, some levels wildcards."""
    import pandas as pd

    patterns = workloads.demo_patterns(count, dialect=dialect)
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
        # The matcher's own words, with the command's flag for its keyword.
        return str(exc).replace("cache_capacity", "--cache-capacity", 1)
    return None


def _format(args: argparse.Namespace, name: str) -> tuple[str | None, str]:
    """The format given for input ``name`` (``messages``): its own ``--messages-format``, else
    ``--input-format``, else none; and that own flag's name."""
    return getattr(args, f"{name}_format") or args.input_format, f"--{name}-format"


def input_refused(flag: str, path: str, override: str | None,
                  own_flag: str | None = None) -> str | None:
    """Why ``path`` (given as ``flag``) cannot be read, if that shows before Spark starts: a
    local file or folder that is missing or unreadable, or a format the name does not tell."""
    local = local_path(path)
    if local is not None:
        if not local.exists():
            return f"{flag} {path}: no such file or folder"
        if not os.access(local, os.R_OK | (os.X_OK if local.is_dir() else 0)):
            return f"{flag} {path}: not readable (permission denied)"
    try:
        input_format(path, override, own_flag)
    except ValueError as exc:
        return f"{flag} {exc}"
    return None


def output_refused(out: str, inputs: dict[str, str]) -> str | None:
    """Why ``--out`` cannot be written, if it cannot: replacing it would delete an input
    (``--out`` is an input, or a folder holding one) before Spark reads it, or it lies inside
    an input folder, which Spark would read with the output in it. ``inputs`` maps each input's
    flag to its path; paths that are not local are left to Spark."""
    local_out = local_path(out)
    if local_out is None:
        return None
    target = local_out.resolve()
    for flag, path in inputs.items():
        local = local_path(path)
        if local is None:
            continue
        source = local.resolve()
        if target == source:
            return f"--out {out} is the {flag} input: writing it would delete it first"
        if target in source.parents:
            return (f"--out {out} holds the {flag} input {path}: replacing it would delete "
                    "the input")
        if source in target.parents and source.is_dir():
            return (f"--out {out} is inside the {flag} folder {path}: the output would be "
                    "read as input")
    return None


def one_line(exc: BaseException) -> str:
    """The first line of a Spark error's message, without the JVM's stack trace."""
    from py4j.protocol import Py4JJavaError

    if isinstance(exc, Py4JJavaError):
        text = str(exc.java_exception.getMessage() or exc.java_exception.toString())
    else:
        text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _spark_errors() -> tuple[type[BaseException], ...]:
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JError)


@contextmanager
def _output(args: argparse.Namespace) -> Iterator[tuple[str, bool]]:
    """Where to write: ``--out``, or (for ``--demo`` without it) a temporary folder removed
    afterwards; the flag says whether the output is kept."""
    if args.out:
        yield args.out, True
        return
    with tempfile.TemporaryDirectory(prefix="topicmatch-demo-") as folder:
        yield str(Path(folder) / "routed"), False


def _fail(message: object, status: int) -> int:
    print(f"topicmatch route: {message}", file=sys.stderr)
    return status


def _read_input(spark: SparkSession, args: argparse.Namespace, name: str,
                count: bool = False) -> tuple[DataFrame, int | None]:
    """Input ``name`` (``messages``) as Spark reads it in the format given for it, and with
    ``count`` its rows counted (reading it all, so that a file Spark cannot read fails here).
    What Spark refuses comes back as one ``InputError`` line."""
    path = getattr(args, name)
    override, own_flag = _format(args, name)
    try:
        frame = read(spark, path, input_format(path, override, own_flag))
        return frame, frame.count() if count else None
    except _spark_errors() as exc:
        raise InputError(f"--{name} {path}: {one_line(exc)}"
                         f"{format_hint(path, override, own_flag)}") from exc


def _inputs(spark: SparkSession, args: argparse.Namespace) -> tuple[DataFrame, DataFrame, str]:
    """The messages, the subscriptions, and the words that name them in the report."""
    if args.demo:
        messages = demo_messages(spark, args.demo_messages, args.dialect)
        subs = demo_subscriptions(spark, args.demo_subscriptions, args.dialect)
        return messages, subs, (
            f"a generated demo: {args.demo_messages:,} random five-level topics against "
            f"{args.demo_subscriptions:,} generated patterns"
        )
    messages, _ = _read_input(spark, args, "messages")
    subs, count = _read_input(spark, args, "subscriptions", count=True)
    plural = "" if count == 1 else "s"
    return messages, subs, (
        f"{args.messages} against {count:,} subscription{plural} from {args.subscriptions}"
    )


def run(args: argparse.Namespace) -> int:
    """Runs the job described by the parsed ``topicmatch route`` arguments."""
    refused = cache_refused(args)
    if not args.demo:
        for name in ("messages", "subscriptions"):
            refused = refused or input_refused(f"--{name}", getattr(args, name),
                                               *_format(args, name))
        refused = refused or output_refused(
            args.out, {"--messages": args.messages, "--subscriptions": args.subscriptions}
        )
    if refused:
        return _fail(refused, 2)
    config = {"spark.ui.showConsoleProgress": "false"}
    spark = session(args.master, config=config, spark_log=args.spark_log)
    with _output(args) as (out, kept):
        try:
            messages, subs, source = _inputs(spark, args)
            routed = route(
                messages, subs, dialect=args.dialect, algorithm=args.algorithm,
                topic_col=args.topic_col, pattern_col=args.pattern_col,
                subscriber_col=args.subscriber_col, keep_unmatched=args.keep_unmatched,
                cache_capacity=args.cache_capacity, group_col=args.group_col,
                shared_subscriptions=args.shared_subscriptions,
            )
        except MissingColumn as exc:
            hint = f" (--{exc.option.replace('_', '-')} names another)" if exc.columns else ""
            return _fail(f"{exc}{hint}", 2)
        except (InputError, ValueError, TypeError) as exc:
            return _fail(exc, 2)
        except _spark_errors() as exc:
            return _fail(f"cannot read the input: {one_line(exc)}", 2)
        try:
            return _execute(spark, args, routed, messages, source, out, kept)
        except _spark_errors() as exc:
            return _fail(f"the Spark job failed: {one_line(exc)} (--spark-log ERROR shows "
                         "Spark's log)", 1)


def _execute(spark: SparkSession, args: argparse.Namespace, routed: DataFrame,
             messages: DataFrame, source: str, out: str, kept: bool) -> int:
    from pyspark.sql import functions as F

    started = time.perf_counter()
    write(routed, out, args.format)
    elapsed = time.perf_counter() - started
    total = messages.count()
    written = read_back(spark, routed, out, args.format)
    stats = written.agg(F.count("subscriber").alias("matches"), F.count("error").alias("errors"))
    row = stats.first()
    matches, errors = (row["matches"], row["errors"]) if row else (0, 0)
    algorithm = args.algorithm if args.algorithm == SQL_BASELINE else resolve_algorithm(
        args.algorithm
    )
    cache = "" if args.cache_capacity is None else f", cache {args.cache_capacity:,}"
    master = spark.sparkContext.master
    print(f"routed {source} ({args.dialect}, {algorithm}{cache}, {master})")
    rate = total / elapsed
    # Three figures for a rate below a hundred (a handful of messages takes seconds of set-up).
    shown = f"{rate:,.0f}" if rate >= 100 else f"{rate:.3g}"
    print(f"messages {total:,}  matches {matches:,}  errors {errors:,}  "
          f"{shown} messages/s ({elapsed:.3f} s)")
    if kept:
        print(f"wrote {args.format} to {Path(out).resolve()}")
    else:
        print("the demo's output is not kept: pass --out DIR to keep it")
    return 0
