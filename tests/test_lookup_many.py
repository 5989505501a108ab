"""`lookup_many` answers as `lookup` per topic does, with the same errors, whatever the input
iterable; subscribers come back as plain `int`/`str` equal to what was subscribed, shared
between results, and stay right through unsubscribe, resubscribe and pickling."""

from __future__ import annotations

import pickle
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import topicmatch as tm
from topicmatch.workloads import ftm_messages, ftm_subscriptions


def canon(found: list[Any]) -> list[str]:
    return sorted(f"{type(s).__name__}:{s}" for s in found)


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
@pytest.mark.parametrize("batch", [1, 100, 1000])
def test_lookup_many_equals_lookup_per_topic_on_ftm(algorithm: str, batch: int) -> None:
    m = tm.Matcher(dialect="amqp", algorithm=algorithm)
    for i, pattern in enumerate(ftm_subscriptions()[:2000]):
        m.subscribe(pattern, i if i % 3 else f"s{i % 97}")
    topics = ftm_messages()[:batch]
    got = m.lookup_many(topics)
    assert len(got) == len(topics)
    assert any(got), "the workload matches something"
    for topic, row in zip(topics, got, strict=True):
        assert canon(row) == canon(m.lookup(topic))
        assert len(set(map(str, row))) == len(row), "distinct subscribers"


class ListWithOwnIter(list[str]):
    def __iter__(self) -> Iterator[str]:
        return iter(["a.b"])


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_every_kind_of_iterable(algorithm: str) -> None:
    m = tm.Matcher(dialect="amqp", algorithm=algorithm)
    m.subscribe("a.*", "x")
    m.subscribe("#", 7)
    want = [canon(m.lookup(t)) for t in ("a.b", "c", "a.b.c")]
    for topics in (["a.b", "c", "a.b.c"], ("a.b", "c", "a.b.c"),
                   iter(["a.b", "c", "a.b.c"]), (t for t in ["a.b", "c", "a.b.c"]),
                   {"a.b": 1, "c": 2, "a.b.c": 3}):
        assert [canon(r) for r in m.lookup_many(topics)] == want
    # A list subclass is iterated through its own __iter__, as before.
    assert [canon(r) for r in m.lookup_many(ListWithOwnIter(["c", "c"]))] == [want[0]]


class Topic(str):
    pass


def test_str_subclass_topics_are_read_as_their_text() -> None:
    m = tm.Matcher(dialect="mqtt")
    m.subscribe("a/+", "x")
    assert m.lookup(Topic("a/b")) == ["x"]
    assert m.lookup_many([Topic("a/b"), "a/b/c"]) == [["x"], []]
    assert m.matches_any(Topic("a/b")) is True


def test_errors_are_those_of_the_first_bad_topic() -> None:
    m = tm.Matcher(dialect="mqtt")
    m.subscribe("#", "x")
    with pytest.raises(TypeError, match="topics must be an iterable of str, not a single str"):
        m.lookup_many("a/b")
    with pytest.raises(TypeError, match="topic must be str, not int"):
        m.lookup_many(["a/b", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="topic must be str, not bytes"):
        m.lookup_many(("a/b", b"a/b"))  # type: ignore[arg-type]
    with pytest.raises(tm.InvalidTopic, match=r"topic \"a/\\u\{d800\}\": level 2: not valid UTF-8"):
        m.lookup_many(["a/b", "a/\ud800", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="topic must be str, not NoneType"):
        m.lookup_many(iter([None, "a/\ud800"]))  # type: ignore[arg-type]
    with pytest.raises(tm.InvalidTopic, match="empty level|invalid"):
        m.lookup_many(["a/b", "a/+"])
    with pytest.raises(TypeError, match="not iterable"):
        m.lookup_many(5)  # type: ignore[arg-type]

    def failing() -> Iterator[str]:
        yield "a/b"
        raise RuntimeError("from the iterable")

    with pytest.raises(RuntimeError, match="from the iterable"):
        m.lookup_many(failing())
    with pytest.raises(tm.InvalidTopic, match="surrogate"):
        m.lookup("a/\udfff")
    with pytest.raises(TypeError, match="topic must be str, not bytes"):
        m.matches_any(b"a/b")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fields must hold one mapping"):
        m.lookup_many(["a/b", "a/c"], fields=[None])


def test_fields_batch_equals_lookup_per_topic() -> None:
    m = tm.Matcher(dialect="amqp", algorithm="trie")
    m.subscribe("a.*", "hi", where={"n": tm.gt(5)})
    m.subscribe("a.#", 1)
    topics = ["a.b", "a.b", "a.b.c", "z"]
    fields = [{"n": 9}, {"n": 1}, None, {"n": 9}]
    got = m.lookup_many(topics, fields=fields)
    assert [canon(r) for r in got] == [canon(m.lookup(t, f)) for t, f in zip(topics, fields)]
    assert canon(got[0]) == ["int:1", "str:hi"]


class Name(str):
    pass


class Number(int):
    pass


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_subscribers_are_plain_shared_and_survive_churn(algorithm: str) -> None:
    m = tm.Matcher(dialect="amqp", algorithm=algorithm)
    big = 10**15
    name = "subscriber-" + "x" * 40
    sid_a = m.subscribe("a.*", Name(name))
    m.subscribe("a.b", Number(big))
    m.subscribe("#.b", name)  # the same subscriber by value
    first = m.lookup("a.b")
    assert canon(first) == [f"int:{big}", f"str:{name}"]
    assert {type(s) for s in first} == {int, str}, "plain int and str, never the subclass"
    second = m.lookup_many(["a.b", "x.b"])
    # The same objects come back: results share each subscriber's one object.
    by_type = {type(s): s for s in first}
    for row in second:
        for s in row:
            assert s is by_type[type(s)]

    assert m.unsubscribe(sid_a) is True  # name still holds "#.b"
    assert canon(m.lookup("a.b")) == [f"int:{big}", f"str:{name}"]
    assert canon(m.lookup("a.c")) == []
    for sid, _pattern, sub in m.subscriptions():
        if sub == name:
            assert m.unsubscribe(sid) is True
    assert m.lookup_many(["a.b", "x.b"]) == [[big], []]
    again = m.subscribe("a.*", name)  # the subscriber comes back
    assert m.lookup("a.c") == [name]
    assert canon(m.lookup("a.b")) == [f"int:{big}", f"str:{name}"]

    restored = pickle.loads(pickle.dumps(m))
    for topic in ("a.b", "a.c", "x.b", "q"):
        assert canon(restored.lookup(topic)) == canon(m.lookup(topic))
    got = restored.lookup_many(["a.b", "a.c"])
    assert canon(got[0]) == [f"int:{big}", f"str:{name}"]
    assert got[1][0] is next(s for s in got[0] if isinstance(s, str))
    assert restored.unsubscribe(again) is True
    assert restored.lookup_many(["a.c", "a.b"]) == [[], [big]]
    assert m.lookup("a.c") == [name], "the original is unchanged"


def test_filtered_subscribers_keep_their_objects() -> None:
    m = tm.Matcher(dialect="amqp", algorithm="trie")
    sid = m.subscribe("a.*", "f", where={"n": tm.gt(5)})
    m.subscribe("b.*", "f")
    assert m.lookup_many(["a.x", "b.x"], fields=[{"n": 9}, None]) == [["f"], ["f"]]
    assert m.unsubscribe(sid) is True
    assert m.lookup_many(["a.x", "b.x"], fields=[{"n": 9}, None]) == [[], ["f"]]
    restored = pickle.loads(pickle.dumps(m))
    assert restored.lookup_many(["a.x", "b.x"]) == [[], ["f"]]


FINALIZER_SCRIPT = """
import gc
import sys

import topicmatch as tm

m = tm.Matcher(dialect="amqp", algorithm=sys.argv[1])
for i in range(50):
    m.subscribe(f"a.{i}", i)
topics = [f"a.{i}" for i in range(50)]


class Handle:
    # A subscription handle that unsubscribes when collected, kept alive only by a cycle: the
    # garbage collector finalizes it whenever a container is allocated, also inside a lookup.
    def __init__(self, sid):
        self.sid = sid
        self.me = self

    def __del__(self):
        m.unsubscribe(self.sid)
        m.subscribe("z.z", "late")


gc.set_threshold(1)
for i in range(200):
    Handle(m.subscribe("a.*", f"h{i}"))
    rows = m.lookup_many(topics)
    assert all(i in row for i, row in enumerate(rows))
    row = m.lookup(topics[i % 50])
gc.collect()
print(len(m), m.lookup("z.z"))
"""


@pytest.mark.parametrize("algorithm", ["trie", "cstrie"])
def test_a_finalizer_changing_the_matcher_inside_a_lookup_does_not_deadlock(
    algorithm: str,
) -> None:
    done = subprocess.run([sys.executable, "-c", FINALIZER_SCRIPT, algorithm], timeout=120,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["51", "['late']"]


class LyingLength:
    """An iterable whose `__len__` claims far more items than it yields."""

    def __len__(self) -> int:
        return 2**62

    def __iter__(self) -> Iterator[str]:
        return iter(["a.b", "c"])


def test_a_lying_len_is_only_a_hint() -> None:
    m = tm.Matcher(dialect="amqp")
    m.subscribe("a.*", "x")
    assert m.lookup_many(LyingLength()) == [["x"], []]


FIELD_FINALIZER_SCRIPT = """
import gc

import topicmatch as tm

fm = tm.FieldMatcher()
for i in range(20):
    fm.subscribe({"n": i}, i)


class Handle:
    def __init__(self, sid):
        self.sid = sid
        self.me = self

    def __del__(self):
        fm.unsubscribe(self.sid)


messages = [{"n": i} for i in range(20)]
criteria = {"k": 1}
gc.set_threshold(1)
for i in range(200):
    Handle(fm.subscribe(criteria, f"h{i}"))
    assert fm.lookup(messages[i % 20]) == [i % 20]
    Handle(fm.subscribe(criteria, f"g{i}"))
    rows = fm.lookup_many(messages)
gc.collect()
print(len(fm))
"""


def test_a_finalizer_changing_a_field_matcher_inside_a_lookup_does_not_deadlock() -> None:
    done = subprocess.run([sys.executable, "-c", FIELD_FINALIZER_SCRIPT], timeout=120,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["20"]


class Node:
    row: list[Any]


@pytest.mark.parametrize("algorithm", ["trie", "cstrie"])
def test_result_lists_are_tracked_by_the_cyclic_gc(algorithm: str) -> None:
    """The rows are kept out of the GC while a batch is built, and back in it on return: a
    cycle through a returned row is collected."""
    import gc
    import weakref

    m = tm.Matcher(dialect="amqp", algorithm=algorithm)
    m.subscribe("a.*", "x")
    rows = m.lookup_many(["a.b"] * 1500 + ["z"])
    assert gc.is_tracked(rows)
    assert all(gc.is_tracked(row) for row in rows)
    assert rows[0] == ["x"] and rows[-1] == []
    node = Node()
    node.row = rows[0]
    rows[0].append(node)  # type: ignore[arg-type]
    alive = weakref.ref(node)
    del node, rows
    gc.collect()
    assert alive() is None, "the cycle through a result row was collected"


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
@pytest.mark.parametrize("fanout", [0, 1, 3, 600])
def test_result_rows_are_ordinary_lists(algorithm: str, fanout: int) -> None:
    """A row holds exactly its subscribers, with room for no more (as `list.copy` makes one),
    and grows, shrinks and frees as any list does."""
    m = tm.Matcher(dialect="mqtt", algorithm=algorithm)
    for k in range(fanout):
        m.subscribe("a/#" if k % 2 else "a/+", 10**6 + k)
    want = sorted(10**6 + k for k in range(fanout))
    for row in [m.lookup("a/b"), *m.lookup_many(["a/b", "a/b"])]:
        assert type(row) is list
        assert sorted(row) == want
        assert sys.getsizeof(row) == sys.getsizeof(row.copy())
        row.extend(range(fanout + 5))
        assert len(row) == 2 * fanout + 5
        del row[fanout:]
        assert sorted(row) == want
        row.append("x")
        assert row[-1] == "x"
        row.clear()
        assert row == []
    assert sorted(m.lookup("a/b")) == want, "the matcher's objects are untouched"
