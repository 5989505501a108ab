"""The main job, end to end on small inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from topicmatch import cli


def test_route_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["route", "--demo-messages", "2000", "--demo-subscriptions", "100"]) == 0
    out = capsys.readouterr().out
    assert "messages 2,000" in out and "messages/s" in out


def test_route_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "subs.txt").write_text("a/+\talice\na/#\tbob\n", encoding="utf-8")
    (tmp_path / "msgs.txt").write_text("a/b\na\nc\na/+\n", encoding="utf-8")
    code = cli.main(["route", "--dialect", "mqtt", "--messages", str(tmp_path / "msgs.txt"),
                     "--subscriptions", str(tmp_path / "subs.txt")])
    out = capsys.readouterr().out
    assert code == 0
    assert "messages 4  matches 3  errors 1" in out


def test_route_rejects_invalid_subscriptions(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "subs.txt").write_text("a/#/b\n", encoding="utf-8")
    code = cli.main(["route", "--dialect", "mqtt", "--subscriptions", str(tmp_path / "subs.txt"),
                     "--demo-messages", "10"])
    assert code == 2
    assert "invalid subscription" in capsys.readouterr().out
