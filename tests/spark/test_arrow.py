"""The executor's batch call: Arrow string arrays in (``Matcher.lookup_arrow``), flat (row,
subscriber, error) arrays out."""

from __future__ import annotations

import pyarrow as pa
import pytest

import topicmatch as tm
from topicmatch.spark._arrow import route_array


@pytest.fixture
def matcher() -> tm.Matcher:
    m = tm.Matcher(dialect="mqtt")
    m.subscribe("a/+", 10)
    m.subscribe("a/#", 20)
    m.subscribe("+/c", 30)
    return m


def triples(matcher: tm.Matcher, array: pa.Array, keep_unmatched: bool = False) -> list[
    tuple[int, int | None, bool]
]:
    routed = route_array(matcher, array, keep_unmatched=keep_unmatched)
    assert routed.rows.type == pa.int32() and routed.subscribers.type == pa.int64()
    assert routed.errors.type == pa.string()
    assert routed.rows.to_pylist() == sorted(routed.rows.to_pylist())
    # Rows keep their order; within a row, subscribers come in the algorithm's order.
    return sorted(
        ((r, s, e is not None)
         for r, s, e in zip(routed.rows.to_pylist(), routed.subscribers.to_pylist(),
                            routed.errors.to_pylist(), strict=True)),
        key=lambda t: (t[0], -1 if t[1] is None else t[1]),
    )


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_rows_subscribers_and_errors(matcher: tm.Matcher, kind: pa.DataType) -> None:
    array = pa.array(["a/b", "x", None, "a/+", "a", "b/c", "a/c"], type=kind)
    got = triples(matcher, array)
    assert got == [
        (0, 10, False), (0, 20, False),
        (2, None, True), (3, None, True),
        (4, 20, False), (5, 30, False),
        (6, 10, False), (6, 20, False), (6, 30, False),
    ]
    errors = route_array(matcher, array).errors.to_pylist()
    assert errors[2] == "the topic is null"
    with pytest.raises(tm.InvalidTopic) as caught:
        matcher.lookup("a/+")
    assert errors[3] == str(caught.value)


def test_keep_unmatched(matcher: tm.Matcher) -> None:
    got = triples(matcher, pa.array(["x", "a/b", "y/z"]), keep_unmatched=True)
    assert got == [(0, None, False), (1, 10, False), (1, 20, False), (2, None, False)]


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_sliced_arrays_use_their_offset(matcher: tm.Matcher, kind: pa.DataType) -> None:
    array = pa.array(["x", None, "a/b", "q", None, "b/c"], type=kind)
    sliced = array.slice(2, 3)
    assert sliced.offset == 2
    assert triples(matcher, sliced) == [(0, 10, False), (0, 20, False), (2, None, True)]
    assert triples(matcher, array.slice(5)) == [(0, 30, False)]
    assert triples(matcher, array.slice(3, 0)) == []


def test_chunked_and_empty(matcher: tm.Matcher) -> None:
    chunked = pa.chunked_array([["a/b"], ["b/c"]])
    assert triples(matcher, chunked) == [(0, 10, False), (0, 20, False), (1, 30, False)]
    assert triples(matcher, pa.array([], type=pa.string())) == []
    assert triples(matcher, pa.array(["", ""])) == [(0, None, True), (1, None, True)]


def test_matches_lookup_on_a_large_batch() -> None:
    from topicmatch import workloads

    m = tm.Matcher(dialect="amqp")
    for i, p in enumerate(workloads.demo_patterns(300)):
        m.subscribe(p, i % 97)
    topics = workloads.demo_topics(3000)
    routed = route_array(m, pa.array(topics))
    want = [(r, s) for r, t in enumerate(topics) for s in m.lookup(t)]
    got = list(zip(routed.rows.to_pylist(), routed.subscribers.to_pylist(), strict=True))
    assert got == want


def test_rejects_str_subscribers_and_other_types() -> None:
    m = tm.Matcher(dialect="amqp")
    m.subscribe("a", "alice")
    with pytest.raises(TypeError, match="ints"):
        route_array(m, pa.array(["a"]))
    with pytest.raises(TypeError, match="string"):
        m.lookup_arrow(pa.array([1, 2]))
    with pytest.raises(TypeError, match="Arrow string array"):
        m.lookup_arrow(["a", "b"])  # type: ignore[call-overload]


def test_malformed_arrays_raise(matcher: tm.Matcher) -> None:
    # pyarrow checks the offsets of a hand-made array but not its text: bytes that are not
    # UTF-8 reach the C Data Interface, and are refused before any topic is read.
    not_utf8 = pa.Array.from_buffers(
        pa.string(), 2,
        [None, pa.py_buffer(b"\0\0\0\0\3\0\0\0\5\0\0\0"), pa.py_buffer(b"a/b\xff\xfe")],
    )
    with pytest.raises(ValueError, match="malformed Arrow string array.*(utf|UTF)"):
        matcher.lookup_arrow(not_utf8)
    with pytest.raises(ValueError, match="malformed Arrow string array"):
        route_array(matcher, not_utf8)
