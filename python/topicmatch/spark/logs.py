"""Spark's own log on the user's terminal: a log4j2 configuration shipped with the package that
sets one level for every logger (off unless asked), and a filter on the JVM's standard error
that drops the warning the JVM itself prints at start (``Using incubator modules``, which no
log configuration reaches)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark import SparkConf, SparkContext

#: The levels ``--spark-log`` accepts, quietest first (log4j2's names).
LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")

#: The log4j2 configuration: every logger at ``-Dtopicmatch.spark.log`` (off if unset).
CONFIG = Path(__file__).resolve().parent / "log4j2.properties"

#: Lines the JVM writes to standard error by itself, whatever the log configuration.
JVM_NOISE = ("WARNING: Using incubator modules",)


def java_options(level: str) -> str:
    """The driver JVM options that load :data:`CONFIG` at ``level``."""
    if level.upper() not in LEVELS:
        raise ValueError(f"unknown Spark log level {level!r}: expected one of {LEVELS}")
    return f"-Dlog4j2.configurationFile={CONFIG.as_uri()} -Dtopicmatch.spark.log={level.upper()}"


def _forward(source: IO[bytes], target: IO[bytes]) -> None:
    """Copies ``source`` to ``target`` line by line, leaving out :data:`JVM_NOISE`."""
    noise = tuple(n.encode() for n in JVM_NOISE)
    with source:
        for line in source:
            if line.startswith(noise):
                continue
            target.write(line)
            target.flush()


def launch(conf: SparkConf) -> SparkContext:
    """Starts the driver JVM for ``conf`` with its standard error filtered (a thread copies it
    to this process's, less :data:`JVM_NOISE`) and returns the SparkContext on it."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    read_fd, write_fd = os.pipe()
    target = sys.__stderr__.buffer if sys.__stderr__ is not None else open(os.devnull, "wb")
    thread = threading.Thread(
        target=_forward, args=(os.fdopen(read_fd, "rb"), target), name="spark-stderr",
        daemon=True,
    )
    thread.start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_fd})
    finally:
        os.close(write_fd)
    return SparkContext(conf=conf, gateway=gateway)
