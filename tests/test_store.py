"""``TopicStore``: a map of concrete topics queried by wildcard filters (retained messages).

Every answer is checked against the obvious scan (each stored topic tested with
``tm.matches``), in all three dialects: hand-written cases, the case tables read in reverse,
hypothesis, and threads writing and reading at once.
"""

from __future__ import annotations

import copy as copy_module
import gc
import json
import pickle
import threading
import weakref
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topicmatch as tm

CASES = Path(__file__).parent / "cases"
SEP = {"amqp": ".", "mqtt": "/", "nats": "."}
ONE = {"amqp": "*", "mqtt": "+", "nats": "*"}
MULTI = {"amqp": "#", "mqtt": "#", "nats": ">"}


def word_order(dialect: str, topic: str) -> list[str]:
    """The documented order: by word list, each word by its bytes (code points)."""
    return topic.split(SEP[dialect])


def scan(dialect: str, stored: dict[str, Any], pattern: str) -> list[tuple[str, Any]]:
    """amqtt's way: test every stored topic, then sort into the store's order. An invalid
    pattern raises `InvalidPattern` even over an empty store."""
    tm.matches(pattern, "x", dialect)
    found = [(t, v) for t, v in stored.items() if tm.matches(pattern, t, dialect)]
    return sorted(found, key=lambda tv: word_order(dialect, tv[0]))


def store_of(dialect: str, topics: list[str]) -> tm.TopicStore:
    store = tm.TopicStore(dialect)
    for i, topic in enumerate(topics):
        store[topic] = i
    return store


def topics_of(found: list[tuple[str, Any]]) -> list[str]:
    return [t for t, _ in found]


# --- the mapping API ---------------------------------------------------------------------


def test_mapping_api() -> None:
    store = tm.TopicStore("mqtt")
    assert len(store) == 0
    payload = object()
    store["a/b"] = payload
    store["a"] = "x"
    assert store["a/b"] is payload
    assert "a/b" in store and "a/c" not in store
    assert len(store) == 2
    assert store.get("a/c") is None
    assert store.get("a/c", 5) == 5
    assert store.get("a") == "x"
    store["a"] = "y"
    assert store["a"] == "y" and len(store) == 2
    with pytest.raises(KeyError):
        store["nope"]
    with pytest.raises(KeyError):
        del store["nope"]
    del store["a"]
    assert "a" not in store
    assert store.pop("a/b") is payload
    assert store.pop("a/b", None) is None
    assert store.pop("a/b", 7) == 7
    with pytest.raises(KeyError):
        store.pop("a/b")
    store["x"] = 1
    store.clear()
    assert len(store) == 0 and list(store) == []
    assert repr(tm.TopicStore("nats")) == 'TopicStore(dialect="nats", topics=0)'
    assert store.dialect == "mqtt"
    assert store.limits == {"max_topic_bytes": 65535, "max_levels": 4096, "max_topics": None}


def test_dialect_is_required() -> None:
    with pytest.raises(TypeError):
        tm.TopicStore()  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown dialect"):
        tm.TopicStore("kafka")


def test_iteration_and_items_are_in_word_order() -> None:
    store = store_of("amqp", ["b", "a.us-east", "a.us.x", "a.us", "", "a"])
    assert list(store) == ["", "a", "a.us", "a.us.x", "a.us-east", "b"]
    assert [t for t, _ in store.items()] == list(store)
    assert dict(store.items()) == {"": 4, "a": 5, "a.us": 3, "a.us.x": 2, "a.us-east": 1, "b": 0}
    it = iter(store)
    assert iter(it) is it


def test_values_are_any_object_and_released_on_delete() -> None:
    class Message:
        pass

    store = tm.TopicStore("mqtt")
    message = Message()
    ref = weakref.ref(message)
    store["t"] = message
    del message
    gc.collect()
    assert ref() is not None
    store["t"] = None  # replaced: the old value is released
    gc.collect()
    assert ref() is None
    kept = Message()
    ref = weakref.ref(kept)
    store["u"] = kept
    del kept
    store.clear()
    gc.collect()
    assert ref() is None


def test_pickle_round_trip() -> None:
    store = tm.TopicStore("amqp", max_topics=10, max_levels=8)
    store[""] = {"empty": True}
    store["a..b"] = [1, 2]
    store["x.y"] = "z"
    copy = pickle.loads(pickle.dumps(store))
    assert list(copy.items()) == list(store.items())
    assert copy.limits == store.limits
    assert copy.dialect == "amqp"
    copy["new"] = 1
    assert "new" not in store


def test_a_store_whose_values_refer_back_to_it_pickles() -> None:
    store = tm.TopicStore("nats")
    store["self"] = store
    store["node.a"] = {"parent": store, "n": 1}
    copy = pickle.loads(pickle.dumps(store))
    assert copy["self"] is copy
    assert copy["node.a"]["parent"] is copy and copy["node.a"]["n"] == 1
    assert copy.match(">") == [("node.a", copy["node.a"]), ("self", copy)]
    shallow = copy_module.copy(store)
    assert shallow["self"] is store and len(shallow) == 2


def test_update_stores_a_batch() -> None:
    store = tm.TopicStore("mqtt")
    store["a/b"] = 0
    store.update({"a/b": 1, "a/c": 2})
    store.update([("x/y", 3), ("x/y", 4), ("z", 5)])  # a topic given twice keeps its last value
    store.update(iter([("w", 6)]))
    store.update([])
    assert dict(store.items()) == {"a/b": 1, "a/c": 2, "x/y": 4, "z": 5, "w": 6}
    assert store.match("a/+") == [("a/b", 1), ("a/c", 2)]


@pytest.mark.parametrize(
    ("items", "error"),
    [([("ok/2", 1), ("a/+", 2)], tm.InvalidTopic),
     ({"ok/2": 1, "": 2}, tm.InvalidTopic),
     ([("ok/2", 1), (3, 2)], TypeError),
     ([("ok/2", 1), "ab"], TypeError),
     ([("ok/2", 1, 2)], TypeError),
     ("ab", TypeError),
     (3, TypeError)],
)
def test_update_refuses_the_whole_batch(items: Any, error: type[Exception]) -> None:
    store = store_of("mqtt", ["ok"])
    with pytest.raises(error):
        store.update(items)
    assert list(store.items()) == [("ok", 0)]


def test_update_past_max_topics_stores_nothing() -> None:
    store = tm.TopicStore("amqp", max_topics=3)
    store["a"] = 0
    with pytest.raises(tm.LimitExceeded, match="max_topics is 3"):
        store.update([("b", 1), ("c", 2), ("d", 3)])
    assert dict(store.items()) == {"a": 0}
    store.update([("a", 9), ("b", 1), ("b", 2), ("c", 3)])  # replacements are no new topics
    assert dict(store.items()) == {"a": 9, "b": 2, "c": 3}


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "topic"),
    [("mqtt", ""), ("mqtt", "a/+"), ("mqtt", "a/#"), ("mqtt", "a\0"), ("nats", ""),
     ("nats", "a..b"), ("nats", "a.*"), ("nats", "a.>"), ("nats", "a b"), ("amqp", "a\ud800")],
)
def test_invalid_topics_are_refused_and_change_nothing(dialect: str, topic: str) -> None:
    store = store_of(dialect, ["ok"])
    for call in (
        lambda: store.__setitem__(topic, 1),
        lambda: store[topic],
        lambda: store.__delitem__(topic),
        lambda: topic in store,
        lambda: store.get(topic),
        lambda: store.pop(topic, None),
    ):
        with pytest.raises(tm.InvalidTopic):
            call()
    assert list(store.items()) == [("ok", 0)]


@pytest.mark.parametrize(
    ("dialect", "pattern"),
    [("mqtt", ""), ("mqtt", "a/#/b"), ("mqtt", "a+"), ("nats", ""), ("nats", "a.>.b"),
     ("nats", "a..b"), ("amqp", "a\ud800")],
)
def test_invalid_filters_are_refused(dialect: str, pattern: str) -> None:
    store = store_of(dialect, ["ok"])
    for call in (
        lambda: store.match(pattern),
        lambda: store.count(pattern),
        lambda: store.iter_match(pattern),
        lambda: store.match_many(["ok", pattern]),
    ):
        with pytest.raises(tm.InvalidPattern):
            call()


def test_types_are_checked() -> None:
    store = tm.TopicStore("mqtt")
    for call in (
        lambda: store.__setitem__(1, 1),  # type: ignore[index]
        lambda: store[b"a"],  # type: ignore[index]
        lambda: 3 in store,  # type: ignore[operator]
        lambda: store.match(None),  # type: ignore[arg-type]
        lambda: store.match_many("a/b"),
        lambda: store.match_many([1]),  # type: ignore[list-item]
        lambda: store.pop("a", 1, 2),  # type: ignore[call-overload]
    ):
        with pytest.raises(TypeError):
            call()


def test_limits() -> None:
    store = tm.TopicStore("amqp", max_topics=2, max_levels=3, max_topic_bytes=8)
    store["a"] = 1
    store["b"] = 2
    with pytest.raises(tm.LimitExceeded, match="max_topics is 2, got 3"):
        store["c"] = 3
    store["a"] = 4  # a replacement is no new topic
    with pytest.raises(tm.LimitExceeded, match="max_levels"):
        store["a.b.c.d"] = 5
    with pytest.raises(tm.LimitExceeded, match="max_topic_bytes"):
        store["abcdefghi"] = 5
    with pytest.raises(tm.LimitExceeded, match="max_levels"):
        store.match("*.*.*.*")
    assert dict(store.items()) == {"a": 4, "b": 2}
    for bad in (0, -1, "3"):
        with pytest.raises((ValueError, TypeError)):
            tm.TopicStore("amqp", max_topics=bad)  # type: ignore[arg-type]


# --- each dialect's rules ----------------------------------------------------------------


def test_mqtt_rules() -> None:
    store = store_of(
        "mqtt", ["a", "a/b", "a/b/c", "a/", "/", "/a", "$SYS/x", "$SYS", "b/$x", "a//b"]
    )
    assert topics_of(store.match("a/#")) == ["a", "a/", "a//b", "a/b", "a/b/c"]
    assert topics_of(store.match("#")) == ["/", "/a", "a", "a/", "a//b", "a/b", "a/b/c", "b/$x"]
    assert topics_of(store.match("+/+")) == ["/", "/a", "a/", "a/b", "b/$x"]
    assert topics_of(store.match("$SYS/#")) == ["$SYS", "$SYS/x"]
    assert topics_of(store.match("+/x")) == []
    assert topics_of(store.match("$share/g/a/+")) == ["a/", "a/b"]
    assert store.count("#") == 8
    # Iteration is no filter: it includes `$` topics.
    assert list(store)[:4] == ["/", "/a", "$SYS", "$SYS/x"] and len(store) == 10


def test_amqp_rules() -> None:
    store = store_of("amqp", ["", ".", "a", "a.", "a.b", "a..b", ".a", "a.b.c", "c"])
    assert topics_of(store.match("#")) == ["", ".", ".a", "a", "a.", "a..b", "a.b", "a.b.c", "c"]
    assert topics_of(store.match("")) == [""]
    assert topics_of(store.match("*")) == ["a", "c"]
    assert topics_of(store.match("a.#.b")) == ["a..b", "a.b"]
    assert topics_of(store.match("*.*")) == [".", ".a", "a.", "a.b"]


def test_nats_rules() -> None:
    store = store_of("nats", ["foo", "foo.bar", "foo.bar.baz", "foo*", "bar"])
    assert topics_of(store.match("foo.>")) == ["foo.bar", "foo.bar.baz"]
    assert topics_of(store.match(">")) == ["bar", "foo", "foo.bar", "foo.bar.baz", "foo*"]
    assert topics_of(store.match("*")) == ["bar", "foo", "foo*"]


def test_match_returns_the_stored_objects() -> None:
    store = tm.TopicStore("mqtt")
    a, b = object(), object()
    store["x/a"] = a
    store["x/b"] = b
    found = store.match("x/+")
    assert found == [("x/a", a), ("x/b", b)]
    assert found[0][1] is a


# --- peer vectors ------------------------------------------------------------------------


def test_nats_subject_tree_vectors() -> None:
    """Cases of nats-server server/stree/stree_test.go (TestSubjectTreeMatchLeafOnly,
    TestSubjectTreeMatchNodes, TestSubjectTreeIterOrdered, ...Tsep...Bug), as data."""
    store = tm.TopicStore("nats")
    store["foo.bar.baz.A"] = 1
    for pattern in ("foo.bar.*.A", "foo.*.baz.A", "foo.*.*.A", "foo.*.*.*", "*.*.*.*", ">",
                    "foo.>", "foo.*.>", "foo.bar.>", "foo.bar.*.>"):
        assert store.count(pattern) == 1, pattern
    assert store.count("foo.bar.baz") == 0
    store = tm.TopicStore("nats")
    values = {"foo.bar.A": 1, "foo.bar.B": 2, "foo.bar.C": 3,
              "foo.baz.A": 11, "foo.baz.B": 22, "foo.baz.C": 33}
    for t, v in values.items():
        store[t] = v
    counts = {"foo.bar.A": 1, "foo.baz.A": 1, "foo.bar": 0, "foo.*.A": 2, "foo.bar.*": 3,
              "foo.baz.*": 3, ">": 6, "foo.>": 6, "foo.bar.>": 3, "foo.baz.>": 3, "foo.ba": 0}
    for pattern, n in counts.items():
        assert store.count(pattern) == n, pattern
    store["foo.bar"] = 42
    values["foo.bar"] = 42
    assert store.count(">") == 7 and store.count("foo.>") == 7 and store.count("foo.bar") == 1
    assert store.match(">") == [(t, values[t]) for t in
                                ["foo.bar", "foo.bar.A", "foo.bar.B", "foo.bar.C",
                                 "foo.baz.A", "foo.baz.B", "foo.baz.C"]]
    store = tm.TopicStore("nats")
    for t in ("foo.xxxxx.foo1234.zz", "foo.yyy.foo123.zz", "foo.yyybar789.zz",
              "foo.yyy.foo12345.zz", "foo.yyy.foo12345.yy", "foo.yyy.foo123456789.zz"):
        store[t] = 22
    assert store.count("foo.*.foo123456789.*") == 1
    assert store.count("foo.*.*.zzz.foo.>") == 0
    store = tm.TopicStore("nats")
    store["A.B.C.D.0.G.H.I.0"] = 22
    store["A.B.C.D.1.G.H.I.0"] = 22
    assert store.count("A.B.*.D.1.*.*.I.0") == 1


def test_mosquitto_retained_vectors() -> None:
    """mosquitto test/broker/04-retain-clear-multiple.py: a `#` subscriber receives the
    retained messages parent first; clearing one leaves the others."""
    store = tm.TopicStore("mqtt")
    for topic in ("1/2/3/4/5/6/7", "1/2/3/4", "1"):
        store[topic] = "retained message"
    assert topics_of(store.match("#")) == ["1", "1/2/3/4", "1/2/3/4/5/6/7"]
    del store["1/2/3/4"]
    assert topics_of(store.match("#")) == ["1", "1/2/3/4/5/6/7"]
    del store["1/2/3/4/5/6/7"]
    assert topics_of(store.match("#")) == ["1"]
    del store["1"]
    assert store.match("#") == []


# --- the case tables in reverse ----------------------------------------------------------


def _rows() -> list[tuple[str, str, str, bool]]:
    rows = [tuple(r) for r in json.loads((CASES / "conformance.json").read_text())["matches"]]
    for suite in json.loads((CASES / "brokers.json").read_text())["suites"]:
        rows += [(suite["dialect"], *r) for r in suite.get("matches", [])]
    return rows


def _valid_topic(dialect: str, topic: str) -> bool:
    try:
        tm.matches(MULTI[dialect], topic, dialect)
    except tm.InvalidTopic:
        return False
    return True


@pytest.mark.parametrize("dialect", ["amqp", "mqtt", "nats"])
def test_case_tables_in_reverse(dialect: str) -> None:
    """Each (pattern, topic, match) row is a store query: the row's pattern over a store of
    every valid topic of the tables finds the row's topic iff the row says it matches."""
    rows = [r for r in _rows() if r[0] == dialect and _valid_topic(dialect, r[2])]
    assert rows
    stored = {topic: i for i, (_, _, topic, _) in enumerate(rows)}
    store = tm.TopicStore(dialect)
    for topic, value in stored.items():
        store[topic] = value
    for _, pattern, topic, expected in rows:
        try:
            found = store.match(pattern)
        except tm.InvalidPattern:
            with pytest.raises(tm.InvalidPattern):
                tm.matches(pattern, topic, dialect)
            continue
        assert found == scan(dialect, stored, pattern), pattern
        assert (topic in topics_of(found)) == expected, (pattern, topic)
        alone = tm.TopicStore(dialect)
        alone[topic] = 0
        assert alone.count(pattern) == int(expected), (pattern, topic)


# --- hypothesis against the scan ---------------------------------------------------------

WORDS = ["a", "b", "", "$s", "ab", "a-b", "x*", "é"]


@st.composite
def store_and_filters(draw: st.DrawFn) -> tuple[str, list[str], list[str], list[str], int]:
    dialect = draw(st.sampled_from(["amqp", "mqtt", "nats"]))
    sep = SEP[dialect]
    word_lists = st.lists(st.sampled_from(WORDS), max_size=4)
    topics = draw(st.lists(word_lists.map(sep.join), max_size=30))
    removed = draw(st.lists(st.sampled_from(topics), max_size=10)) if topics else []
    filter_word = st.sampled_from([*WORDS, ONE[dialect], MULTI[dialect]])
    filters = draw(st.lists(st.lists(filter_word, max_size=5).map(sep.join), min_size=1,
                            max_size=6))
    page = draw(st.integers(1, 4))
    return dialect, topics, removed, filters, page


@settings(max_examples=300, deadline=None)
@given(store_and_filters())
def test_store_equals_the_scan(case: tuple[str, list[str], list[str], list[str], int]) -> None:
    dialect, topics, removed, filters, _ = case
    store = tm.TopicStore(dialect)
    model: dict[str, Any] = {}
    for i, topic in enumerate(topics):
        if _valid_topic(dialect, topic):
            store[topic] = i
            model[topic] = i
        else:
            with pytest.raises(tm.InvalidTopic):
                store[topic] = i
    for topic in removed:
        if topic in model:
            assert store.pop(topic) == model.pop(topic)
    assert len(store) == len(model)
    assert list(store.items()) == sorted(model.items(), key=lambda tv: word_order(dialect, tv[0]))
    bulk = tm.TopicStore(dialect)
    bulk.update(model)
    assert list(bulk.items()) == list(store.items())
    valid = []
    for pattern in filters:
        try:
            expected = scan(dialect, model, pattern)
        except tm.InvalidPattern:
            with pytest.raises(tm.InvalidPattern):
                store.match(pattern)
            continue
        valid.append(pattern)
        assert store.match(pattern) == expected, pattern
        assert list(store.iter_match(pattern)) == expected, pattern
        assert store.count(pattern) == len(expected)
    assert store.match_many(valid) == [scan(dialect, model, p) for p in valid]


# --- laziness and concurrency ------------------------------------------------------------


def test_iter_match_is_lazy_and_survives_writes() -> None:
    """A lazy iterator holds no lock: the loop may write to the store; every topic stored
    throughout is returned exactly once, in order."""
    store = store_of("mqtt", [f"t/{i:04d}" for i in range(2000)])
    seen = []
    for topic, _ in store.iter_match("t/+"):
        seen.append(topic)
        del store[topic]  # deleting what was returned
        store[f"u/{topic}"] = 0  # and writing elsewhere
    assert seen == [f"t/{i:04d}" for i in range(2000)]
    assert len(store) == 2000
    it = store.iter_match("u/#")
    first = next(it)
    store.clear()
    rest = list(it)
    assert first == ("u/t/0000", 0)
    assert len(rest) < 2000  # at most the page already read
    assert next(it, None) is None


def test_threads_write_and_read_at_once() -> None:
    """Writers churn their own topics while readers query: every answer is sorted, has no
    duplicate, holds each permanent topic exactly once and only matching topics."""
    store = tm.TopicStore("mqtt")
    permanent = [f"p/{i}/x" for i in range(300)]
    for topic in permanent:
        store[topic] = "p"
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer(n: int) -> None:
        try:
            for round_ in range(150):
                for i in range(20):
                    store[f"w{n}/{i}/x"] = round_
                for i in range(20):
                    del store[f"w{n}/{i}/x"]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        try:
            while not stop.is_set():
                for pattern in ("+/+/x", "#", "p/#"):
                    found = topics_of(store.match(pattern))
                    assert found == sorted(set(found), key=lambda t: t.split("/"))
                    assert [t for t in found if t.startswith("p/")] == sorted(
                        permanent, key=lambda t: t.split("/"))
                    assert all(tm.matches(pattern, t, "mqtt") for t in found)
                    assert store.count("p/+/x") == len(permanent)
                lists = store.match_many(["p/#", "w0/#"])
                assert len(lists[0]) == len(permanent)
                assert sum(1 for _ in store.iter_match("p/+/x")) == len(permanent)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in writers + readers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert not errors, errors[0]
    assert sorted(store) == sorted(permanent)


def test_a_finalizer_may_use_the_store() -> None:
    """A value is released after the store's lock: its finalizer can write to the store."""
    store = tm.TopicStore("mqtt")

    class Reentrant:
        def __del__(self) -> None:
            store["finalized"] = True

    store["a"] = Reentrant()
    store["a"] = 1  # releases the first value
    assert store["finalized"] is True
    store["b"] = Reentrant()
    del store["b"]
    store["c"] = Reentrant()
    store.clear()
    assert "finalized" in store


def test_a_signal_stops_a_long_answer(stops_on_signal: Any) -> None:
    """A long answer runs pending signal handlers as its pairs are made: a handler that raises
    (as Ctrl-C's does) stops it soon after the signal, and the store answers as before."""
    s = tm.TopicStore("mqtt")
    s.update({f"s{i % 50}/d{i}": i for i in range(50_000)})
    filters, want = stops_on_signal(s.match_many, lambda count: ["#"] * (count // 1_000))
    assert s.match_many(filters) == want
