"""``topicmatch route`` end to end on small files, in each input and output format."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession

from topicmatch import cli

pytestmark = pytest.mark.spark

MESSAGES = [{"id": 1, "topic": "a/b"}, {"id": 2, "topic": "a"}, {"id": 3, "topic": "c"},
            {"id": 4, "topic": "a/+"}]
SUBSCRIPTIONS = [{"pattern": "a/+", "subscriber": "alice"}, {"pattern": "a/#", "subscriber": "bob"}]


def write_table(rows: Sequence[Mapping[str, object]], path: Path, fmt: str) -> Path:
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
    readers: dict[str, Callable[[str], DataFrame]] = {
        "parquet": spark.read.parquet, "csv": spark.read.option("header", True).csv,
        "jsonl": spark.read.json}
    reader = readers[fmt]
    rows = {(str(r["id"]), r["subscriber"], r["error"] is not None)
            for r in reader(str(out)).collect()}
    assert rows == {("1", "alice", False), ("1", "bob", False), ("2", "bob", False),
                    ("4", None, True)}


def test_csv_keeps_an_empty_text_apart_from_a_missing_one(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # AMQP's empty routing key and pattern are valid: quoted empty fields, not missing ones.
    messages = tmp_path / "m.csv"
    messages.write_text('id,topic\n1,""\n2,\n3,a\n', encoding="utf-8")
    subs = tmp_path / "s.csv"
    subs.write_text('pattern,subscriber\n"",empty\n#,all\n', encoding="utf-8")
    out = tmp_path / "out"
    code = cli.main(["route", "--dialect", "amqp", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(out), "--format", "csv",
                     "--master", "local[2]"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "messages 3  matches 3  errors 1" in printed
    back = spark.read.option("header", True).option("nullValue", "\ue000").csv(str(out))
    rows = {(r["id"], r["topic"], r["subscriber"], r["error"] is not None)
            for r in back.collect()}
    assert rows == {("1", "", "empty", False), ("1", "", "all", False),
                    ("2", None, None, True), ("3", "a", "all", False)}


@pytest.mark.parametrize("flag", [[], ["--no-shared-subscriptions"]])
def test_the_shared_subscriptions_switch(spark: SparkSession, tmp_path: Path, flag: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    messages = write_table([{"id": 1, "topic": "a/b"}], tmp_path / "msgs", "jsonl")
    subs = write_table([{"pattern": "$share/g/a/+", "subscriber": s} for s in ("x", "y")],
                       tmp_path / "subs", "jsonl")
    out = tmp_path / "out"
    assert cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(out), "--master", "local[2]",
                     *flag]) == 0, capsys.readouterr()
    got = sorted(r["subscriber"] for r in spark.read.parquet(str(out)).collect())
    # As groups, one member gets the message; as plain filters, both subscribers do.
    assert len(got) == (2 if flag else 1) and set(got) <= {"x", "y"}


def test_route_demo_with_sql_baseline(spark: SparkSession, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    outs = {}
    for algorithm in ("auto", "sql-baseline"):
        out = tmp_path / algorithm
        assert cli.main(["route", "--dialect", "mqtt", "--demo", "--demo-messages", "1000",
                         "--demo-subscriptions", "50", "--algorithm", algorithm,
                         "--out", str(out), "--master", "local[2]"]) == 0
        printed = capsys.readouterr().out
        assert "messages 1,000" in printed
        assert ("routed a generated demo: 1,000 random five-level topics against 50 generated "
                "patterns (mqtt, ") in printed
        outs[algorithm] = sorted(
            (r["id"], r["subscriber"]) for r in spark.read.parquet(str(out)).collect()
        )
    assert outs["auto"] == outs["sql-baseline"]
    assert len(outs["auto"]) > 50


def test_route_rejects_invalid_subscriptions(spark: SparkSession, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    messages = write_table(MESSAGES, tmp_path / "msgs", "jsonl")
    subs = write_table([{"pattern": "a/#/b", "subscriber": "x"}], tmp_path / "subs", "jsonl")
    code = cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(tmp_path / "out")])
    assert code == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("topicmatch route: 1 invalid mqtt subscription(s):\n  row 0")
    assert captured.out == ""
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("messages_fmt", "extra", "problem"), [
    # A CSV file read as Parquet: Spark cannot read it.
    ("csv", ["--input-format", "parquet"], "--messages {messages}: [FAILED_READ_FILE"),
    ("parquet", ["--topic-col", "subject"],
     "the messages have no column 'subject' (columns: ['id', 'topic']) (--topic-col names "
     "another)"),
    ("parquet", ["--pattern-col", "filter"], "the subscriptions have no column 'filter'"),
    ("parquet", ["--subscriber-col", "who"],
     "the subscriptions have no column 'who' (columns: ['pattern', 'subscriber']) "
     "(--subscriber-col names another)"),
])
def test_route_input_errors_are_one_line(spark: SparkSession, tmp_path: Path, messages_fmt: str,
                                         extra: list[str], problem: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    messages = write_table(MESSAGES, tmp_path / "msgs", messages_fmt)
    subs = write_table(SUBSCRIPTIONS, tmp_path / "subs", "parquet")
    code = cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(tmp_path / "out"), *extra])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith("topicmatch route: ")
    assert problem.format(messages=messages) in captured.err
    assert not (tmp_path / "out").exists()


def test_a_folder_spark_cannot_read_as_parquet_names_input_format(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    write_table(MESSAGES, folder / "part-0", "csv")
    subs = write_table(SUBSCRIPTIONS, tmp_path / "subs", "csv")  # one --input-format for both
    argv = ["route", "--dialect", "mqtt", "--messages", str(folder), "--subscriptions",
            str(subs), "--out", str(tmp_path / "out")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(
        " (read as Parquet, as a folder is; for another format: --input-format "
        "parquet|csv|jsonl, or --messages-format for this input alone)\n")
    assert cli.main([*argv, "--input-format", "csv"]) == 0, capsys.readouterr()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_an_empty_input_file_says_it_has_no_columns(spark: SparkSession, tmp_path: Path, fmt: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    messages = tmp_path / f"msgs.{fmt}"
    messages.write_bytes(b"")
    subs = write_table(SUBSCRIPTIONS, tmp_path / "subs", "parquet")
    assert cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == ("topicmatch route: the messages have no column 'topic' "
                                       "(no columns at all: an empty input?)\n")


def test_a_binary_file_read_as_csv_says_its_header_is_not_text(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = tmp_path / "msgs.csv"
    messages.write_bytes(bytes(range(256)) * 4)  # control characters and bytes not UTF-8
    subs = write_table(SUBSCRIPTIONS, tmp_path / "subs", "parquet")
    assert cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("topicmatch route: the messages have no column 'topic' (its first "
                          "line is not text, "), err
    assert err.endswith(" column(s): binary data read as CSV or JSON Lines?) (--topic-col "
                        "names another)\n"), err
    assert "\ufffd" not in err and "\x01" not in err


def test_each_input_takes_its_own_format(spark: SparkSession, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """CSV messages under a name that tells nothing, beside a folder of JSON Lines
    subscriptions: each input's own flag sets its format, over --input-format."""
    messages = write_table(MESSAGES, tmp_path / "msgs", "csv").rename(tmp_path / "msgs.txt")
    folder = tmp_path / "subs"
    folder.mkdir()
    write_table(SUBSCRIPTIONS, folder / "part-0", "jsonl")
    argv = ["route", "--dialect", "mqtt", "--messages", str(messages), "--subscriptions",
            str(folder), "--out", str(tmp_path / "out"), "--input-format", "jsonl"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == ("topicmatch route: the messages have no column 'topic' "
                   "(columns: ['_corrupt_record']) (--topic-col names another)\n")
    assert cli.main([*argv, "--messages-format", "csv"]) == 0, capsys.readouterr()
    assert "messages 4  matches 3  errors 1" in capsys.readouterr().out
    argv = [*argv[:-2], "--messages-format", "csv", "--subscriptions-format", "parquet"]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.startswith(f"topicmatch route: --subscriptions {folder}: ")


def test_route_with_a_cache(spark: SparkSession, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    outs = {}
    for extra in ([], ["--cache-capacity", "256"]):
        out = tmp_path / ("cached" if extra else "plain")
        assert cli.main(["route", "--dialect", "mqtt", "--demo", "--demo-messages", "1000",
                         "--demo-subscriptions", "50", "--algorithm", "cstrie", *extra,
                         "--out", str(out), "--master", "local[2]"]) == 0
        printed = capsys.readouterr().out
        assert ("cstrie, cache 256," in printed) == bool(extra), printed
        outs[bool(extra)] = sorted(
            (r["id"], r["subscriber"]) for r in spark.read.parquet(str(out)).collect()
        )
    assert outs[True] == outs[False] and len(outs[True]) > 50


@pytest.mark.parametrize(("algorithm", "capacity", "refusal"), [
    ("trie", "64", "topicmatch route: --cache-capacity applies only to"),
    ("sql-baseline", "64", "does not apply to --algorithm sql-baseline"),
    ("cstrie", "0", "must be a positive integer"),
])
def test_route_refuses_a_cache_before_starting(tmp_path: Path, algorithm: str, capacity: str,
                                               refusal: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["route", "--dialect", "mqtt", "--algorithm", algorithm,
                     "--cache-capacity", capacity, "--demo", "--demo-messages", "10",
                     "--out", str(tmp_path / "out")])
    assert code == 2
    assert refusal in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_job_that_fails_once_started_is_one_line(spark: SparkSession, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    messages = write_table(MESSAGES, tmp_path / "msgs", "parquet")
    subs = write_table(SUBSCRIPTIONS, tmp_path / "subs", "parquet")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    code = cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(blocker / "out")])
    captured = capsys.readouterr()
    assert code == 1, captured
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith("topicmatch route: the Spark job failed: ")
    assert "--spark-log ERROR shows Spark's log" in captured.err


def test_route_with_a_group_column(spark: SparkSession, tmp_path: Path) -> None:
    messages = write_table([{"id": i, "topic": f"jobs/{i}"} for i in range(40)],
                           tmp_path / "msgs", "parquet")
    subs = write_table([{"pattern": "jobs/+", "subscriber": w, "grp": "workers"}
                        for w in ("w1", "w2", "w3")]
                       + [{"pattern": "jobs/#", "subscriber": "audit", "grp": None}],
                       tmp_path / "subs", "parquet")
    out = tmp_path / "out"
    code = cli.main(["route", "--dialect", "mqtt", "--messages", str(messages),
                     "--subscriptions", str(subs), "--out", str(out), "--group-col", "grp",
                     "--master", "local[2]"])
    assert code == 0
    rows = [(r["id"], r["subscriber"]) for r in spark.read.parquet(str(out)).collect()]
    per_message = Counter(i for i, _ in rows)
    assert set(per_message.values()) == {2}  # audit and one worker, for every message
    workers = Counter(s for _, s in rows if s != "audit")
    assert set(workers) == {"w1", "w2", "w3"}  # the topics' hashes spread them
