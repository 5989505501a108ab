"""A SparkSession set up for topicmatch."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from topicmatch.spark import logs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The master when none is given and no spark-submit gave one.
LOCAL = "local[*]"


def submitted() -> bool:
    """Whether this process runs under ``spark-submit`` (its JVM is already up and holds the
    master and configuration spark-submit was given)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def session(
    master: str | None = None,
    *,
    app_name: str = "topicmatch",
    config: dict[str, str] | None = None,
    spark_log: str | None = None,
) -> SparkSession:
    """Gets or creates a SparkSession with Arrow on.

    ``master``: ``None`` keeps the one ``spark-submit`` gave, else runs in local mode
    (``local[*]``). In local mode the Python workers run this interpreter (so they import the
    same topicmatch) and Spark binds to loopback.

    ``spark_log``: a log4j2 level (``OFF``, ``ERROR``, ``WARN``, ``INFO`` ...) for Spark's own
    log on standard error; given, a JVM this call starts loads the package's log configuration
    at that level and the JVM's own start-up warning is filtered out, and an existing session
    gets the level by ``setLogLevel``. ``None`` leaves Spark's logging as Spark sets it up.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    if master is None and not submitted():
        master = LOCAL
    local = master is not None and master.startswith("local")
    if local:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings = {
        "spark.app.name": app_name,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.execution.pythonUDF.arrow.enabled": "true",
    }
    if master is not None:
        settings["spark.master"] = master
    if local:
        settings["spark.driver.host"] = "127.0.0.1"
        settings["spark.driver.bindAddress"] = "127.0.0.1"
    settings.update(config or {})
    started = SparkContext._active_spark_context is not None or submitted()
    if spark_log is not None and not started:
        options = settings.get("spark.driver.extraJavaOptions", "")
        settings["spark.driver.extraJavaOptions"] = (
            f"{options} {logs.java_options(spark_log)}".strip()
        )
        logs.launch(SparkConf().setAll(list(settings.items())))
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if spark_log is not None:
        spark.sparkContext.setLogLevel(spark_log.upper())
    return spark
