"""`cache_capacity`: the bound on `inverted_bitmap`'s cached topic rows, from Python
(`cstrie`'s result cache: `test_cstrie_cache.py`)."""

import pickle

import pytest

import topicmatch as tm
from conftest import loaded_with_cache


def _loaded(capacity: int | None) -> tm.Matcher:
    return loaded_with_cache("inverted_bitmap", capacity)


def test_default_is_none() -> None:
    assert tm.Matcher("amqp", "inverted_bitmap").cache_capacity is None
    assert tm.Matcher("amqp", "trie").cache_capacity is None


@pytest.mark.parametrize("capacity", [1, 2, 1000])
def test_results_do_not_depend_on_the_capacity(capacity: int) -> None:
    m = _loaded(capacity)
    assert m.cache_capacity == capacity
    topics = [f"a.t{i % 7}" for i in range(50)] + ["a.b", "x.y", "a.b"]
    for _ in range(3):  # cached on first sighting while there is room, else on the second
        for t in topics:
            expected = {"all", "star"} | ({"exact"} if t == "a.b" else set())
            if not t.startswith("a."):
                expected = {"all"}
            assert set(m.lookup(t)) == expected, t
    # A subscription after rows were cached updates them.
    m.subscribe("*.t3", "late")
    assert set(m.lookup("a.t3")) == {"all", "star", "late"}


def test_pickle_keeps_the_capacity() -> None:
    m = _loaded(3)
    m.lookup("a.b")
    restored = pickle.loads(pickle.dumps(m))
    assert restored.cache_capacity == 3
    assert restored.algorithm == "inverted_bitmap"
    assert sorted(restored.lookup("a.b")) == ["all", "exact", "star"]
    plain = pickle.loads(pickle.dumps(_loaded(None)))
    assert plain.cache_capacity is None


@pytest.mark.parametrize("algorithm", [a for a in tm.ALGORITHMS if a not in ("inverted_bitmap", "cstrie")])
def test_refused_for_algorithms_without_a_cache(algorithm: str) -> None:
    with pytest.raises(ValueError, match="cache_capacity applies only to algorithms 'inverted_bitmap' and 'cstrie'"):
        tm.Matcher("amqp", algorithm, cache_capacity=10)
    assert tm.Matcher("amqp", algorithm, cache_capacity=None).cache_capacity is None


@pytest.mark.parametrize("bad", [0, -1, 2**70])
def test_must_be_a_positive_int(bad: int) -> None:
    with pytest.raises(ValueError, match="cache_capacity must be a positive integer"):
        tm.Matcher("amqp", "inverted_bitmap", cache_capacity=bad)


@pytest.mark.parametrize("bad", [1.5, "10", True])
def test_must_be_an_int(bad: object) -> None:
    with pytest.raises(TypeError, match="cache_capacity must be int or None"):
        tm.Matcher("amqp", "inverted_bitmap", cache_capacity=bad)  # type: ignore[arg-type]
