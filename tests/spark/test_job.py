"""``topicmatch route`` end to end on small files, in each input and output format."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from topicmatch import cli

pytestmark = pytest.mark.spark

MESSAGES = [{"id": 1, "topic": "a/b"}, {"id": 2, "topic": "a"}, {"id": 3, "topic": "c"},
            {"id": 4, "topic": "a/+"}]
SUBSCRIPTIONS = [{"pattern": "a/+", "subscriber": "alice"}, {"pattern": "a/#", "subscriber": "bob"}]


def write_table(rows: list[dict[str, object]], path: Path, fmt: str) -> Path:
    table = pa.Table.from_pylist(rows)
    if fmt == "parquet":
        pq.write_table(table, path.with_suffix(".parquet"))
    elif fmt == "csv":
        pacsv.write_csv(table, path.with_suffix(".csv"))
    else:
        path.with_suffix(".jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    return path.with_suffix({"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}[fmt])


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_route_files(spark: SparkSession, tmp_path: Path, fmt: str,
                     capsys: pytest.CaptureFixture[str]) -> None:
    messages = write_table(MESSAGES, tmp_path / "msgs", fmt)
    subs = write_table(SUBSCRIPTIONS, tmp_path / "subs", fmt)
    out = tmp_path / "out"
    code = cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(out), "--format", fmt,
                     "--master", "local[2]"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "messages 4  matches 3  errors 1" in printed and "messages/s" in printed
    assert f"wrote {fmt} to {out}" in printed
    reader = {"parquet": spark.read.parquet, "csv": spark.read.option("header", True).csv,
              "jsonl": spark.read.json}[fmt]
    rows = {(str(r["id"]), r["subscriber"], r["error"] is not None)
            for r in reader(str(out)).collect()}
    assert rows == {("1", "alice", False), ("1", "bob", False), ("2", "bob", False),
                    ("4", None, True)}


def test_route_demo_with_sql_baseline(spark: SparkSession, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    outs = {}
    for algorithm in ("auto", "sql-baseline"):
        out = tmp_path / algorithm
        assert cli.main(["route", "--dialect", "mqtt", "--demo-messages", "1000", "--demo-subscriptions", "50",
                         "--algorithm", algorithm, "--out", str(out), "--master", "local[2]"]) == 0
        printed = capsys.readouterr().out
        assert "messages 1,000" in printed and "seed5 demo" in printed
        outs[algorithm] = sorted(
            (r["id"], r["subscriber"]) for r in spark.read.parquet(str(out)).collect()
        )
    assert outs["auto"] == outs["sql-baseline"]
    assert len(outs["auto"]) > 50


def test_route_rejects_invalid_subscriptions(spark: SparkSession, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    subs = write_table([{"pattern": "a/#/b", "subscriber": "x"}], tmp_path / "subs", "jsonl")
    code = cli.main(["route", "--dialect", "mqtt", "--subscriptions", str(subs),
                     "--demo-messages", "10", "--out", str(tmp_path / "out")])
    assert code == 2
    assert "1 invalid mqtt subscription(s)" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


def test_route_with_a_cache(spark: SparkSession, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    outs = {}
    for extra in ([], ["--cache-capacity", "256"]):
        out = tmp_path / ("cached" if extra else "plain")
        assert cli.main(["route", "--dialect", "mqtt", "--demo-messages", "1000", "--demo-subscriptions", "50",
                         "--algorithm", "cstrie", *extra, "--out", str(out),
                         "--master", "local[2]"]) == 0
        printed = capsys.readouterr().out
        assert ("cstrie, cache 256," in printed) == bool(extra), printed
        outs[bool(extra)] = sorted(
            (r["id"], r["subscriber"]) for r in spark.read.parquet(str(out)).collect()
        )
    assert outs[True] == outs[False] and len(outs[True]) > 50


@pytest.mark.parametrize(("algorithm", "capacity", "refusal"), [
    ("trie", "64", "cache_capacity applies only to"),
    ("sql-baseline", "64", "does not apply to --algorithm sql-baseline"),
    ("cstrie", "0", "must be a positive integer"),
])
def test_route_refuses_a_cache_before_starting(tmp_path: Path, algorithm: str, capacity: str,
                                               refusal: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["route", "--dialect", "mqtt", "--algorithm", algorithm, "--cache-capacity", capacity,
                     "--demo-messages", "10", "--out", str(tmp_path / "out")])
    assert code == 2
    assert refusal in capsys.readouterr().out
    assert not (tmp_path / "out").exists()
