"""`cstrie`'s optional result cache (`cache_capacity=N`), from Python: the same answers as
without it, every change seen at once, kept by pickling, bounded (under threads:
`test_concurrency.py`, `cstrie-cached`)."""

import pickle

import pytest

import topicmatch as tm
from conftest import loaded_with_cache


def _loaded(capacity: int | None) -> tm.Matcher:
    return loaded_with_cache("cstrie", capacity)


def test_off_by_default() -> None:
    assert tm.Matcher("amqp", "cstrie").cache_capacity is None
    assert tm.Matcher("amqp").cache_capacity is None


@pytest.mark.parametrize("capacity", [1, 3, 1000])
def test_same_answers_as_without_a_cache(capacity: int) -> None:
    cached, plain = _loaded(capacity), _loaded(None)
    assert cached.cache_capacity == capacity
    topics = [f"a.t{i % 7}" for i in range(40)] + ["a.b", "x.y", "a.b", "a", ""]
    for _ in range(3):  # cached on the second sighting, served from the third
        for t in topics:
            assert sorted(cached.lookup(t)) == sorted(plain.lookup(t)), t
        got, expected = cached.lookup_many(topics), plain.lookup_many(topics)
        assert [sorted(r) for r in got] == [sorted(r) for r in expected]


def test_every_change_is_seen_at_once() -> None:
    m = _loaded(16)
    for _ in range(3):
        assert sorted(m.lookup("a.b")) == ["all", "exact", "star"]
    sid = m.subscribe("*.b", "late")
    assert sorted(m.lookup("a.b")) == ["all", "exact", "late", "star"]
    assert m.lookup("a.b") == m.lookup("a.b")
    assert m.unsubscribe(sid)
    assert sorted(m.lookup("a.b")) == ["all", "exact", "star"]
    too_long = "w" * 1_000_000
    for _ in range(3):  # validated every time: a bad topic is never cached
        with pytest.raises(tm.TopicMatchError):
            m.lookup(too_long)


@pytest.mark.parametrize("algorithm", ["cstrie", "inverted_bitmap"])
def test_where_subscriptions_joining_and_leaving_a_cached_pattern_are_seen_at_once(
        algorithm: str) -> None:
    """A `where=` subscription to a pattern that already has one changes only the pattern's
    bucket, not what the algorithm (and its cache) holds: cached topics still see it come and
    go, and the last one's leaving empties the pattern for them."""
    m = tm.Matcher("mqtt", algorithm, cache_capacity=16)
    first = m.subscribe("notify/#", "u0", where={"user": 0})
    m.subscribe("notify/#", "all")
    for _ in range(3):
        assert sorted(m.lookup("notify/a", fields={"user": 0})) == ["all", "u0"]
    ids = [m.subscribe("notify/#", f"u{i}", where={"user": i}) for i in range(1, 40)]
    for i in (1, 20, 39):
        assert sorted(m.lookup("notify/a", fields={"user": i})) == ["all", f"u{i}"]
        assert sorted(m.lookup_many(["notify/a"], fields=[{"user": i}])[0]) == ["all", f"u{i}"]
    assert m.unsubscribe(first)
    assert m.lookup("notify/a", fields={"user": 0}) == ["all"]
    for sid in ids:
        assert m.unsubscribe(sid)
    for i in range(40):
        assert m.lookup("notify/a", fields={"user": i}) == ["all"]
    m.subscribe("notify/#", "back", where={"user": 5})
    assert sorted(m.lookup("notify/a", fields={"user": 5})) == ["all", "back"]


def test_pickle_keeps_the_capacity() -> None:
    m = _loaded(5)
    m.lookup("a.b")
    m.lookup("a.b")
    restored = pickle.loads(pickle.dumps(m))
    assert restored.cache_capacity == 5
    assert restored.algorithm == "cstrie"
    assert sorted(restored.lookup("a.b")) == ["all", "exact", "star"]


def test_a_huge_capacity_is_capped_not_allocated() -> None:
    m = tm.Matcher("amqp", "cstrie", cache_capacity=2**40)
    assert m.cache_capacity == 2**40
    m.subscribe("a.*", "star")
    for _ in range(3):
        assert m.lookup("a.b") == ["star"]


@pytest.mark.parametrize("bad", [0, -1, 2**70, "10", 1.5])
def test_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        tm.Matcher("amqp", "cstrie", cache_capacity=bad)  # type: ignore[arg-type]
