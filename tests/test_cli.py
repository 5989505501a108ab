"""The command line without Spark: its options, and that pyspark stays optional."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import topicmatch as tm
from topicmatch import cli


def test_route_options() -> None:
    args = cli.build_parser().parse_args(["route", "--dialect", "mqtt"])
    assert (args.dialect, args.algorithm, args.master, args.format, args.out) == (
        "mqtt", "auto", "local[*]", "parquet", cli.ROUTE_OUT
    )
    args = cli.build_parser().parse_args(
        ["route", "--messages", "m.csv", "--algorithm", "sql-baseline", "--format", "jsonl",
         "--dialect", "amqp", "--keep-unmatched"]
    )
    assert (args.messages, args.algorithm, args.format, args.dialect, args.keep_unmatched) == (
        "m.csv", "sql-baseline", "jsonl", "amqp", True
    )
    for algorithm in tm.ALGORITHMS:
        assert cli.build_parser().parse_args(["route", "--dialect", "mqtt", "--algorithm", algorithm]).algorithm


@pytest.mark.parametrize("bad", [["route", "--dialect", "mqtt", "--format", "xml"],
                                 ["route", "--dialect", "x"], ["route"],
                                 ["route", "--dialect", "mqtt", "--algorithm", "magic"]])
def test_route_rejects_bad_options(bad: list[str]) -> None:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(bad)


def test_input_format_by_extension(tmp_path: Path) -> None:
    from topicmatch.spark.job import input_format

    assert input_format("x.parquet", None) == "parquet"
    assert input_format("x.CSV", None) == "csv"
    assert input_format("x.jsonl", None) == "jsonl"
    assert input_format("x.txt", "csv") == "csv"
    assert input_format(str(tmp_path), None) == "parquet"
    with pytest.raises(ValueError, match="--input-format"):
        input_format("x.txt", None)


def test_importing_topicmatch_does_not_import_pyspark() -> None:
    code = ("import sys, topicmatch, topicmatch.cli; "
            "topicmatch.cli.build_parser(); assert 'pyspark' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
