"""The command line without Spark: its options and help, the checks it makes before Spark
starts, that pyspark stays optional, and that the package's modules import without a cycle."""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import topicmatch as tm
from topicmatch import cli
from topicmatch.formats import input_format, local_path

PACKAGE = Path(tm.__file__).resolve().parent


def test_route_options() -> None:
    args = cli.build_parser().parse_args(["route", "--dialect", "mqtt", "--demo"])
    assert (args.dialect, args.algorithm, args.master, args.format, args.out, args.spark_log) == (
        "mqtt", "auto", None, "parquet", None, "OFF"
    )
    args = cli.build_parser().parse_args(
        ["route", "--messages", "m.csv", "--algorithm", "sql-baseline", "--format", "jsonl",
         "--dialect", "amqp", "--keep-unmatched", "--spark-log", "warn"]
    )
    assert (args.messages, args.algorithm, args.format, args.dialect, args.keep_unmatched,
            args.spark_log) == ("m.csv", "sql-baseline", "jsonl", "amqp", True, "WARN")
    for algorithm in tm.ALGORITHMS:
        parsed = cli.build_parser().parse_args(
            ["route", "--dialect", "mqtt", "--algorithm", algorithm]
        )
        assert parsed.algorithm == algorithm
    parse = cli.build_parser().parse_args
    assert parse(["route", "--dialect", "mqtt"]).shared_subscriptions is None
    assert parse(["route", "--dialect", "mqtt", "--no-shared-subscriptions"]).shared_subscriptions \
        is False


@pytest.mark.parametrize("bad", [["route", "--dialect", "mqtt", "--format", "xml"],
                                 ["route", "--dialect", "x"], ["route"],
                                 ["route", "--dialect", "mqtt", "--algorithm", "magic"],
                                 ["route", "--dialect", "mqtt", "--spark-log", "loud"]])
def test_route_rejects_bad_options(bad: list[str]) -> None:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(bad)


@pytest.mark.parametrize(("argv", "problem"), [
    ([], "give --messages and --subscriptions (or --demo"),
    (["--messages", "m.csv", "--out", "o"], "--messages needs --subscriptions too"),
    (["--subscriptions", "s.csv", "--out", "o"], "--subscriptions needs --messages too"),
    (["--messages", "m.csv", "--subscriptions", "s.csv"], "--out DIR is required"),
    (["--demo", "--messages", "m.csv"], "--demo generates its own messages and subscriptions"),
    (["--demo", "--subscriptions", "s.csv"], "leave out --subscriptions"),
    (["--demo-messages", "10", "--messages", "m.csv", "--subscriptions", "s.csv", "--out", "o"],
     "--demo-messages applies only with --demo"),
    (["--demo", "--demo-subscriptions", "0"], "must be at least 1"),
])
def test_route_refuses_an_incomplete_command_line(
    argv: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["route", "--dialect", "mqtt", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [captured.err.strip()], "one line"
    assert captured.err.startswith("topicmatch route: ") and problem in captured.err


def test_the_demo_fills_in_its_sizes() -> None:
    args = cli.build_parser().parse_args(["route", "--dialect", "mqtt", "--demo"])
    assert cli.check_route(args) is None
    assert (args.demo_messages, args.demo_subscriptions) == (
        cli.DEMO_MESSAGES, cli.DEMO_SUBSCRIPTIONS
    )


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    messages, subs = tmp_path / "m.csv", tmp_path / "s.csv"
    messages.write_text("id,topic\n1,a/b\n", encoding="utf-8")
    subs.write_text("pattern,subscriber\na/+,x\n", encoding="utf-8")
    return messages, subs


def _route(tmp_path: Path, *argv: str) -> list[str]:
    return ["route", "--dialect", "mqtt", *argv, "--out", str(tmp_path / "out")]


@pytest.mark.parametrize("which", ["messages", "subscriptions"])
def test_a_missing_input_is_one_line_before_spark_starts(
    tmp_path: Path, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = dict(zip(("messages", "subscriptions"), _inputs(tmp_path), strict=True))
    paths[which] = tmp_path / "missing.parquet"
    argv = _route(tmp_path, "--messages", str(paths["messages"]),
                  "--subscriptions", str(paths["subscriptions"]))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"topicmatch route: --{which} {paths[which]}: no such file or folder\n"
    assert not (tmp_path / "out").exists()


def test_an_unreadable_input_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    messages, subs = _inputs(tmp_path)
    # As root, permissions do not stop a read: deny it where the job asks.
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != messages)
    assert cli.main(_route(tmp_path, "--messages", str(messages),
                           "--subscriptions", str(subs))) == 2
    assert capsys.readouterr().err == (
        f"topicmatch route: --messages {messages}: not readable (permission denied)\n"
    )


@pytest.mark.parametrize("where", ["the messages", "their folder", "the parent folder",
                                   "inside a messages folder"])
def test_an_out_that_would_delete_or_hold_an_input_is_refused_before_spark_starts(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    messages, subs = _inputs(folder)
    (folder / "notes.txt").write_text("precious")
    if where == "inside a messages folder":
        inputs = folder / "messages"
        inputs.mkdir()
        messages.rename(inputs / messages.name)
        messages, out = inputs, inputs / "routed"
    else:
        out = {"the messages": messages, "their folder": folder,
               "the parent folder": tmp_path}[where]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    argv = ["route", "--dialect", "mqtt", "--messages", str(messages),
            "--subscriptions", str(subs), "--out", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"topicmatch route: --out {out} ") and err.count("\n") == 1
    assert "--messages" in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert (folder / "notes.txt").read_text() == "precious"


def test_an_input_of_unknown_format_is_one_line(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    messages, subs = _inputs(tmp_path)
    renamed = messages.rename(tmp_path / "m.txt")
    assert cli.main(_route(tmp_path, "--messages", str(renamed),
                           "--subscriptions", str(subs))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--input-format parquet|csv|jsonl" in err
    assert "or --messages-format for this input alone" in err


def test_input_format_by_extension(tmp_path: Path) -> None:
    assert input_format("x.parquet", None) == "parquet"
    assert input_format("x.CSV", None) == "csv"
    assert input_format("x.jsonl", None) == "jsonl"
    assert input_format("x.txt", "csv") == "csv"
    assert input_format(str(tmp_path), None) == "parquet"
    with pytest.raises(ValueError, match="--input-format"):
        input_format("x.txt", None)


def test_local_paths() -> None:
    assert local_path("a/b.csv") == Path("a/b.csv")
    assert local_path("file:///tmp/x") == Path("/tmp/x")
    assert local_path("file:/tmp/x") == Path("/tmp/x")
    assert local_path("s3a://bucket/x") is None


def _help(*argv: str) -> str:
    result = subprocess.run([sys.executable, "-m", "topicmatch", *argv, "--help"],
                            capture_output=True, text=True, check=True, timeout=60,
                            env={**os.environ, "COLUMNS": "100"})
    return result.stdout


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@pytest.mark.parametrize("command", [[], ["route"], ["bench"]])
def test_help_is_plain_text_and_shows_every_default(command: list[str]) -> None:
    text = _help(*command)
    assert "``" not in text and ":class:" not in text
    parser = cli.build_parser()
    if command:
        parser = _subparsers(parser)[command[0]]
    flat = " ".join(text.split())
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        assert action.help, f"{action.option_strings} has no help"
        default = action.default
        if default is None or isinstance(default, bool) or action.nargs == 0:
            continue
        assert f"(default: {default})" in flat, (action.option_strings, default)


def test_route_help_explains_the_demo() -> None:
    text = " ".join(_help("route").split())
    assert "seed5" not in text and "ftm" not in text
    assert "--demo route a generated demo" in text and "five-level topics" in text


def test_bench_help_explains_every_workload() -> None:
    from topicmatch.bench.workloads import NAMES

    text = " ".join(_help("bench").split())
    for name in NAMES:
        assert f"{name} (" in text or f"{name} and " in text, name
    assert "the floor (a dict of precomputed answers" in text


def test_importing_topicmatch_does_not_import_pyspark() -> None:
    code = ("import sys, topicmatch, topicmatch.cli; "
            "topicmatch.cli.build_parser(); assert 'pyspark' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def _imports() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports (anywhere in it, a
    function's deferred imports included)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                          else node.module for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def test_the_package_has_no_import_cycle() -> None:
    graph = _imports()
    assert "topicmatch.cli" in graph["topicmatch.__main__"], "the graph sees imports"

    def reachable(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    cycles = sorted((a, b) for a in graph for b in graph[a] if a in reachable(b))
    assert cycles == []


def test_an_extra_this_python_cannot_install_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "_installed", lambda module: module != "pyspark")
    assert cli.missing_extra("route") == (
        "topicmatch route: needs the 'spark' extra (pyspark not installed): "
        'pip install ".[spark]" in the project\'s folder')
    monkeypatch.setattr(sys, "version_info", (3, 10, 13, "final", 0))
    assert cli.missing_extra("route") == (
        "topicmatch route: needs the 'spark' extra (pyspark not installed), which needs "
        "Python 3.11 or later (this is 3.10)")
