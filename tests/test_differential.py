"""Hypothesis: every algorithm against the naive oracle on a tiny alphabet (empty words, `$`
words, every wildcard of every dialect): lookups, and each text as a pattern for
``covering`` / ``intersecting``."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

import topicmatch as tm

WORDS = ["a", "b", "", "$s", "*", "#", "+", ">", "a#"]
SEP = {"amqp": ".", "mqtt": "/", "nats": "."}


def texts(dialect: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WORDS), max_size=5).map(SEP[dialect].join)


def outcome(call: Callable[[], object]) -> object:
    try:
        result = call()
    except tm.TopicMatchError as exc:
        return type(exc).__name__
    return sorted(result, key=repr) if isinstance(result, list) else result


@given(
    dialect=st.sampled_from(tm.DIALECTS),
    data=st.data(),
)
def test_algorithms_agree_with_naive(dialect: str, data: st.DataObject) -> None:
    patterns = data.draw(st.lists(st.tuples(texts(dialect), st.integers(0, 3)), max_size=12))
    topics = data.draw(st.lists(texts(dialect), max_size=12))
    oracle = tm.Matcher(dialect=dialect, algorithm="naive")
    others = [tm.Matcher(dialect=dialect, algorithm=a) for a in tm.ALGORITHMS if a != "naive"]
    for pattern, sub in patterns:
        want = outcome(lambda: [oracle.subscribe(pattern, sub)])
        for m in others:
            assert outcome(lambda: [m.subscribe(pattern, sub)]) == want
    for topic in topics:
        want = outcome(lambda: oracle.lookup(topic))
        for m in others:
            assert outcome(lambda: m.lookup(topic)) == want, (m.algorithm, topic)
            assert outcome(lambda: m.matches_any(topic)) == outcome(lambda: oracle.matches_any(topic))
            for relate in ("covering", "intersecting"):
                related = outcome(lambda: getattr(oracle, relate)(topic))
                assert outcome(lambda: getattr(m, relate)(topic)) == related, (m.algorithm, relate)
