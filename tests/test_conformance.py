"""The shared case table (also run by the Rust suite), for every algorithm, from Python."""

from __future__ import annotations

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
