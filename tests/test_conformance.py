"""The shared case table (also run by the Rust suite), for every algorithm, from Python."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import topicmatch as tm
from conftest import load_cases

CASES = load_cases()


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_matches_follow_the_table(algorithm: str) -> None:
    for dialect, pattern, topic, want in CASES["matches"]:
        m = tm.Matcher(dialect=dialect, algorithm=algorithm)
        m.subscribe(pattern, "s")
        assert m.lookup(topic) == (["s"] if want else []), (dialect, pattern, topic)
        assert m.matches_any(topic) is want, (dialect, pattern, topic)
        assert tm.matches(pattern, topic, dialect=dialect) is want


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_broker_scenarios(algorithm: str) -> None:
    for scenario in CASES["scenarios"]:
        m = tm.Matcher(dialect=scenario["dialect"], algorithm=algorithm)
        for pattern, subscriber in scenario["bindings"]:
            m.subscribe(pattern, subscriber)
        for topic, want in scenario["expect"].items():
            assert sorted(m.lookup(topic)) == sorted(want), (scenario["dialect"], topic)


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_invalid_patterns_raise_and_change_nothing(algorithm: str) -> None:
    for dialect, pattern in CASES["invalid_patterns"]:
        m = tm.Matcher(dialect=dialect, algorithm=algorithm)
        with pytest.raises(tm.InvalidPattern) as info:
            m.subscribe(pattern, "s")
        assert dialect in str(info.value)
        assert isinstance(info.value, ValueError)
        assert len(m) == 0
    for dialect, pattern in CASES["valid_patterns"]:
        tm.Matcher(dialect=dialect, algorithm=algorithm).subscribe(pattern, "s")


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_invalid_topics_raise(algorithm: str) -> None:
    for dialect, topic in CASES["invalid_topics"]:
        m = tm.Matcher(dialect=dialect, algorithm=algorithm)
        m.subscribe("#" if dialect != "nats" else ">", "s")
        with pytest.raises(tm.InvalidTopic):
            m.lookup(topic)
        with pytest.raises(tm.InvalidTopic):
            m.matches_any(topic)
        with pytest.raises(tm.InvalidTopic):
            m.lookup_many(["ok", topic])
    for dialect, topic in CASES["valid_topics"]:
        tm.Matcher(dialect=dialect, algorithm=algorithm).lookup(topic)


# ---- Cases from real broker and client test suites (tests/cases/brokers.json) ----

BROKERS = json.loads((Path(__file__).parent / "cases" / "brokers.json").read_text(encoding="utf-8"))
SUITES = BROKERS["suites"]
SUITE_IDS = [f"{s['dialect']}:{s['source'][:60]}" for s in SUITES]


KINDS = {
    "source", "dialect", "matches", "rejected", "valid_patterns", "invalid_patterns",
    "valid_topics", "invalid_topics", "scenarios", "filter_counts", "equivalent",
    "equivalence_topics",
}


def test_broker_table_is_well_formed() -> None:
    """A misspelt kind would silently run nothing: every key must be known."""
    assert len(SUITES) >= 30
    for suite in SUITES:
        assert set(suite) <= KINDS, suite["source"]
        assert suite["source"] and suite["dialect"] in ("amqp", "mqtt", "nats")
        assert set(suite) - {"source", "dialect"}, suite["source"]
        for scenario in suite.get("scenarios", []):
            for step in scenario["steps"]:
                assert set(step) <= {"bind", "unbind", "expect"}, suite["source"]


def _lookup_set(m: tm.Matcher, topic: str) -> list[str]:
    got = [str(s) for s in m.lookup(topic)]
    assert len(got) == len(set(got)), ("duplicate delivery", topic, got)
    return sorted(got)


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
@pytest.mark.parametrize("suite", SUITES, ids=SUITE_IDS)
def test_broker_suite(suite: dict[str, Any], algorithm: str) -> None:
    dialect, source = suite["dialect"], suite["source"]
    _check_matches(dialect, algorithm, suite)
    _check_rejected(dialect, algorithm, suite)
    _check_validity(dialect, algorithm, suite)
    for scenario in suite.get("scenarios", []):
        _run_scenario(dialect, algorithm, source, scenario["steps"],
                      scenario.get("shared_subscriptions"))
    _check_counts_and_equivalences(dialect, algorithm, suite)


def _check_matches(dialect: str, algorithm: str, suite: dict[str, Any]) -> None:
    for pattern, topic, want in suite.get("matches", []):
        case = (suite["source"], pattern, topic)
        assert tm.matches(pattern, topic, dialect=dialect) is want, case
        m = tm.Matcher(dialect=dialect, algorithm=algorithm)
        m.subscribe(pattern, "s")
        assert m.lookup(topic) == (["s"] if want else []), case
        assert m.matches_any(topic) is want, case


def _check_rejected(dialect: str, algorithm: str, suite: dict[str, Any]) -> None:
    for pattern, topic, which in suite.get("rejected", []):
        error = tm.InvalidPattern if which == "pattern" else tm.InvalidTopic
        with pytest.raises(error):
            tm.matches(pattern, topic, dialect=dialect)
        m = tm.Matcher(dialect=dialect, algorithm=algorithm)
        if which == "pattern":
            with pytest.raises(tm.InvalidPattern):
                m.subscribe(pattern, "s")
            assert len(m) == 0
        else:
            m.subscribe(pattern, "s")
            with pytest.raises(tm.InvalidTopic):
                m.lookup(topic)


def _check_validity(dialect: str, algorithm: str, suite: dict[str, Any]) -> None:
    for pattern in suite.get("invalid_patterns", []):
        m = tm.Matcher(dialect=dialect, algorithm=algorithm)
        with pytest.raises(tm.InvalidPattern):
            m.subscribe(pattern, "s")
        assert len(m) == 0, (suite["source"], pattern)
    for pattern in suite.get("valid_patterns", []):
        tm.Matcher(dialect=dialect, algorithm=algorithm).subscribe(pattern, "s")
    for topic in suite.get("invalid_topics", []):
        m = tm.Matcher(dialect=dialect, algorithm=algorithm)
        m.subscribe(">" if dialect == "nats" else "#", "s")
        with pytest.raises(tm.InvalidTopic):
            m.lookup(topic)
        with pytest.raises(tm.InvalidTopic):
            m.matches_any(topic)
    for topic in suite.get("valid_topics", []):
        tm.Matcher(dialect=dialect, algorithm=algorithm).lookup(topic)


def _check_counts_and_equivalences(dialect: str, algorithm: str, suite: dict[str, Any]) -> None:
    for table in suite.get("filter_counts", []):
        for pattern, count in table["counts"]:
            m = tm.Matcher(dialect=dialect, algorithm=algorithm)
            m.subscribe(pattern, "s")
            hits = sum(m.matches_any(topic) for topic in table["topics"])
            assert hits == count, (suite["source"], pattern)
    for first, second in suite.get("equivalent", []):
        a = tm.Matcher(dialect=dialect, algorithm=algorithm)
        b = tm.Matcher(dialect=dialect, algorithm=algorithm)
        a.subscribe(first, "s")
        b.subscribe(second, "s")
        for topic in suite["equivalence_topics"]:
            assert a.lookup(topic) == b.lookup(topic), (suite["source"], first, second, topic)


def _run_scenario(dialect: str, algorithm: str, source: str, steps: list[dict[str, Any]],
                  shared: bool | None = None) -> None:
    m = tm.Matcher(dialect=dialect, algorithm=algorithm, shared_subscriptions=shared)
    ids: dict[tuple[str, str], int] = {}
    for step in steps:
        for pattern, subscriber in step.get("bind", []):
            sid = m.subscribe(pattern, subscriber)
            assert ids.setdefault((pattern, subscriber), sid) == sid, "subscribe is idempotent"
        for pattern, subscriber in step.get("unbind", []):
            assert m.unsubscribe(ids.pop((pattern, subscriber))), (source, pattern, subscriber)
        for topic, want in step.get("expect", {}).items():
            assert _lookup_set(m, topic) == sorted(want), (source, topic)
