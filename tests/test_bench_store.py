"""The retained-message benchmark measures what it says: each way answers each filter with
the same topics, and every figure is a positive time."""

from __future__ import annotations

import pytest

from topicmatch.bench import store


def test_store_benchmark_runs_small() -> None:
    rows = store.measure(topics=400, repeats=1)
    assert [r.name for r in rows] == ["plus", "device", "all"]
    assert rows[2].found == 400
    assert rows[1].found >= 1
    for r in rows:
        assert {"store", "scan"} <= set(r.seconds)
        assert all(s > 0 for s in r.seconds.values())
        assert r.ratio("scan") == r.seconds["scan"] / r.seconds["store"]
    text = store.render(rows, 400)
    assert text.count("\n") == len(rows) + 1
    assert "amqtt/store" in text


def test_main_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert store.main(["--topics", "200", "--repeats", "1"]) == 0
    assert "scan/store" in capsys.readouterr().out
