"""One local Spark session for every Spark test (two cores, no UI, a quick-starting JVM)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from topicmatch.spark import session

JVM_FLAGS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    s = session(
        "local[2]",
        app_name="topicmatch-tests",
        config={
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.extraJavaOptions": JVM_FLAGS,
            "spark.executor.extraJavaOptions": JVM_FLAGS,
            # Small batches, so a test's few hundred rows still span several native calls.
            "spark.sql.execution.arrow.maxRecordsPerBatch": "64",
        },
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()
