"""What ``topicmatch route`` prints on the terminal: its report, and Spark's own log only when
asked (``--spark-log``), never the JVM's start-up warning. Run as a user runs it, in a new
process (each starts its own JVM)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

COMMAND = [str(Path(sys.executable).parent / "topicmatch"), "route", "--dialect", "mqtt",
           "--demo", "--demo-messages", "300", "--demo-subscriptions", "20", "--master", "local[1]"]


def _run(cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *extra], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=240)


def test_route_prints_its_report_and_nothing_of_spark(tmp_path: Path) -> None:
    result = _run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result.stdout
    assert lines[0].startswith("routed a generated demo: 300 random five-level topics against "
                               "20 generated patterns (mqtt, ")
    assert lines[1].startswith("messages 300  matches ")
    assert lines[2] == "the demo's output is not kept: pass --out DIR to keep it"
    assert list(tmp_path.iterdir()) == [], "the demo without --out leaves nothing behind"


def test_route_prints_sparks_log_when_asked(tmp_path: Path) -> None:
    result = _run(tmp_path, "--spark-log", "info", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert " INFO SparkContext: Running Spark version" in result.stderr
    assert "Using incubator modules" not in result.stderr
    assert "Setting default log level" not in result.stderr
    assert result.stdout.splitlines()[2] == f"wrote parquet to {tmp_path / 'out'}"
