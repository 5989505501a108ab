"""A SparkSession set up for topicmatch."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def session(
    master: str = "local[*]", *, app_name: str = "topicmatch", config: dict[str, str] | None = None
) -> SparkSession:
    """Gets or creates a SparkSession whose Python workers run this interpreter (so they import
    the same topicmatch), bound to loopback in local mode, with Arrow on."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.pythonUDF.arrow.enabled", "true")
    )
    if master.startswith("local"):
        builder = builder.config("spark.driver.host", "127.0.0.1").config(
            "spark.driver.bindAddress", "127.0.0.1"
        )
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
