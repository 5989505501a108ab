"""The Python boundary: `lookup`, `lookup_many` and `lookup_arrow` give the naive oracle's
answer for every algorithm, `subscriber_table` maps Arrow results back to subscribers, and
long calls let other threads run."""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topicmatch as tm

WORDS = ["a", "b", "", "$s", "*", "#", "+", ">", "a#"]
SEP = {"amqp": ".", "mqtt": "/", "nats": "."}


def texts(dialect: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WORDS), max_size=5).map(SEP[dialect].join)


def valid(m: tm.Matcher, topic: str) -> bool:
    try:
        m.lookup(topic)
    except tm.InvalidTopic:
        return False
    return True


def arrow_rows(m: tm.Matcher, topics: list[str | None]) -> list[set[object] | None]:
    """`lookup_arrow`'s rows as sets of subscribers, through `subscriber_table`."""
    lists = pa.array(m.lookup_arrow(pa.array(topics, pa.string())))
    assert lists.type == pa.list_(pa.uint32())
    table = m.subscriber_table()
    rows: list[set[object] | None] = []
    for row in lists.to_pylist():
        if row is None:
            rows.append(None)
        else:
            assert len(row) == len(set(row)), "a subscriber twice in one row"
            rows.append({table[i] for i in row})
    return rows


@given(dialect=st.sampled_from(tm.DIALECTS), data=st.data())
def test_every_api_of_every_algorithm_agrees_with_naive(
    dialect: str, data: st.DataObject
) -> None:
    subs: list[tuple[str, str | int]] = data.draw(
        st.lists(st.tuples(texts(dialect), st.sampled_from([0, 1, 2, "x", "y"])), max_size=12))
    drops = data.draw(st.lists(st.integers(0, 11), max_size=4))
    matchers = [tm.Matcher(dialect, algorithm) for algorithm in tm.ALGORITHMS]
    for m in matchers:
        ids = []
        for pattern, sub in subs:
            try:
                ids.append(m.subscribe(pattern, sub))
            except tm.InvalidPattern:
                pass
        for i in drops:
            if i < len(ids):
                m.unsubscribe(ids[i])
    oracle = matchers[tm.ALGORITHMS.index("naive")]
    topics = [t for t in data.draw(st.lists(texts(dialect), max_size=10)) if valid(oracle, t)]
    want = [set(oracle.lookup(t)) for t in topics]
    for m in matchers:
        singles = [m.lookup(t) for t in topics]
        assert [len(r) == len(set(r)) for r in singles] == [True] * len(topics)
        assert [set(r) for r in singles] == want, m.algorithm
        assert [set(r) for r in m.lookup_many(topics)] == want, m.algorithm
        assert arrow_rows(m, [*topics, None]) == [*want, None], m.algorithm


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_subscriber_table_and_index_reuse(algorithm: str) -> None:
    m = tm.Matcher("mqtt", algorithm)
    a = m.subscribe("s/#", "alice")
    m.subscribe("s/+", "bob")
    m.subscribe("s/x", 7)
    table = m.subscriber_table()
    assert sorted(map(str, filter(None, table))) == ["7", "alice", "bob"]
    row = pa.array(m.lookup_arrow(pa.array(["s/x"]))).to_pylist()[0]
    assert {table[i] for i in row} == {"alice", "bob", 7}
    assert m.unsubscribe(a)
    table = m.subscriber_table()
    assert "alice" not in table and None in table
    # Churn through many subscribers: indices are reused, so the table stays small.
    for i in range(2_000):
        sid = m.subscribe("t/+", f"churn-{i}")
        m.lookup_many(["t/a"])
        m.unsubscribe(sid)
    assert len(m.subscriber_table()) < 100
    row = pa.array(m.lookup_arrow(pa.array(["s/x"]))).to_pylist()[0]
    assert {m.subscriber_table()[i] for i in row} == {"bob", 7}


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.string_view()])
def test_lookup_arrow_inputs_nulls_and_errors(kind: pa.DataType) -> None:
    m = tm.Matcher("mqtt", "trie")
    m.subscribe("a/+", 1)
    m.subscribe("#", 2)
    topics = pa.array(["a/b", None, "a/+", "", "$SYS/x", "a"], type=kind)
    with pytest.raises(tm.InvalidTopic, match=r"topic at index 2: .*mqtt"):
        m.lookup_arrow(topics)
    lists, errors = m.lookup_arrow(topics, errors=True)
    table = m.subscriber_table()
    rows = [None if r is None else sorted(table[i] for i in r)
            for r in pa.array(lists).to_pylist()]
    assert rows == [[1, 2], None, None, None, [], [2]]
    reasons = pa.array(errors).to_pylist()
    assert reasons[0] is None and reasons[1] is None and reasons[5] is None
    assert "mqtt topic" in reasons[2] and "mqtt topic" in reasons[3]
    assert len(lists) == len(errors) == 6
    # A stream (a chunked array) and a slice read the same rows.
    chunked = pa.chunked_array([topics.slice(0, 1), topics.slice(4)])
    assert [sorted(table[i] for i in r) for r in pa.array(m.lookup_arrow(chunked)).to_pylist()
            ] == [[1, 2], [], [2]]


def names(m: tm.Matcher, lists: object) -> list[list[str] | None]:
    """`lookup_arrow`'s rows as sorted subscriber names (str), through `subscriber_table`."""
    table = m.subscriber_table()
    return [None if r is None else sorted(str(table[i]) for i in r)
            for r in pa.array(lists).to_pylist()]


def test_lookup_arrow_takes_a_table_of_one_string_column() -> None:
    """A table of one string column (a DuckDB relation, a pyarrow or polars table, as an array
    or a stream of batches) gives its column's rows, null where the row or its value is; a
    table of more columns or of another type is refused, naming its columns."""
    m = tm.Matcher("mqtt", "cstrie")
    m.subscribe("a/+", "x")
    m.subscribe("#", "y")
    topics = pa.array(["a/b", None, "c", "a/d"], pa.large_string())
    want = [["x", "y"], None, ["y"], ["x", "y"]]
    assert names(m, m.lookup_arrow(pa.table({"topic": topics}))) == want
    assert names(m, m.lookup_arrow(pa.record_batch({"topic": topics}))) == want
    assert names(m, m.lookup_arrow(pa.table({"topic": topics}).to_reader(max_chunksize=3))) == want
    # A null row of the table is a null topic, in a slice too.
    rows = pa.StructArray.from_arrays([topics], names=["topic"],
                                      mask=pa.array([False, False, True, False]))
    assert names(m, m.lookup_arrow(rows)) == [["x", "y"], None, None, ["x", "y"]]
    assert names(m, m.lookup_arrow(rows.slice(2))) == [None, ["x", "y"]]
    lists, errors = m.lookup_arrow(pa.table({"t": ["a/b", "a/+"]}), errors=True)
    assert names(m, lists) == [["x", "y"], None]
    assert pa.array(errors).to_pylist()[0] is None and "mqtt topic" in pa.array(errors)[1].as_py()
    with pytest.raises(tm.InvalidTopic, match="topic at index 1"):
        m.lookup_arrow(pa.table({"t": ["a/b", "a/+"]}))
    with pytest.raises(TypeError, match=r"2 columns \(topic, n\): select"):
        m.lookup_arrow(pa.table({"topic": topics, "n": [1, 2, 3, 4]}))
    with pytest.raises(TypeError, match='column "n" is Int64'):
        m.lookup_arrow(pa.table({"n": [1]}))
    with pytest.raises(TypeError, match="not list"):
        m.lookup_arrow(["a/b"])  # type: ignore[call-overload]

    class Unreadable(type):
        @property
        def __module__(cls) -> str:  # type: ignore[override]
            raise RuntimeError("no module")

    class Nameless(metaclass=Unreadable):
        pass

    # Its type's module cannot be read: still the TypeError of an object that is not Arrow.
    with pytest.raises(TypeError, match="not Nameless"):
        m.lookup_arrow(Nameless())  # type: ignore[call-overload]


def test_lookup_many_points_an_arrow_array_to_lookup_arrow() -> None:
    m = tm.Matcher("mqtt", "trie")
    for topics in (pa.array(["a/b"]), pa.chunked_array([["a/b"]])):
        with pytest.raises(TypeError, match="StringScalar; an Arrow array goes to lookup_arrow"):
            m.lookup_many(topics)
    with pytest.raises(TypeError, match=r"^topic must be str, not int$"):
        m.lookup_many(iter([1]))  # type: ignore[arg-type]


def test_lookup_arrow_takes_a_dictionary_of_strings() -> None:
    """A dictionary-encoded column (a categorical: topics repeat) gives each row its value's
    subscribers, null where the key or its value is; in a table too, and with errors."""
    m = tm.Matcher("mqtt", "cstrie")
    m.subscribe("a/+", "x")
    m.subscribe("#", "y")
    for kind in (pa.string(), pa.large_string(), pa.string_view()):
        values = pa.array(["a/b", None, "c", "a/+"], kind)
        keys = pa.array([0, 2, None, 1, 0, 2], pa.int8())
        column = pa.DictionaryArray.from_arrays(keys, values)
        with pytest.raises(tm.InvalidTopic, match="topic at index 1"):
            m.lookup_arrow(pa.DictionaryArray.from_arrays(pa.array([0, 3], pa.int8()), values))
        want = [["x", "y"], ["y"], None, None, ["x", "y"], ["y"]]
        assert names(m, m.lookup_arrow(column)) == want, kind
        assert names(m, m.lookup_arrow(column.slice(3))) == want[3:], kind
        assert names(m, m.lookup_arrow(pa.table({"topic": column}))) == want, kind
        lists, errors = m.lookup_arrow(
            pa.DictionaryArray.from_arrays(pa.array([3, 0], pa.uint16()), values), errors=True)
        assert names(m, lists) == [None, ["x", "y"]]
        assert "mqtt topic" in pa.array(errors)[0].as_py()
    empty = pa.DictionaryArray.from_arrays(pa.array([None, None], pa.int32()),
                                           pa.array([], pa.string()))
    assert names(m, m.lookup_arrow(empty)) == [None, None]
    with pytest.raises(TypeError, match="or a dictionary of one"):
        m.lookup_arrow(pa.array([1, 2]).dictionary_encode())


def raw_rows(lists: object) -> list[list[int] | None]:
    return [None if r is None else sorted(r) for r in pa.array(lists).to_pylist()]


@given(values=st.lists(st.sampled_from(["a/b", "a/c", "c", "a/+", "", None]), min_size=1,
                       max_size=5),
       keys=st.lists(st.one_of(st.none(), st.integers(0, 4)), max_size=12),
       algorithm=st.sampled_from(["cstrie", "trie", "inverted_bitmap"]))
def test_a_dictionary_of_repeated_topics_gives_what_its_decoded_rows_give(
        values: list[str | None], keys: list[int | None], algorithm: str) -> None:
    """A dictionary whose values repeat is looked up once per value; each row gets what the
    same topics as plain strings get: the same rows, nulls, reasons and first invalid row."""
    m = tm.Matcher("mqtt", algorithm)
    m.subscribe("a/+", "x")
    m.subscribe("#", "y")
    m.subscribe("a/b", "z")
    keys = [None if k is None else k % len(values) for k in keys]
    column = pa.DictionaryArray.from_arrays(pa.array(keys, pa.int32()),
                                           pa.array(values, pa.string()))
    plain = column.cast(pa.string())
    for topics, decoded in ((column, plain), (column.slice(1), plain.slice(1)),
                            (pa.chunked_array([column, column.slice(2)]),
                             pa.chunked_array([plain, plain.slice(2)]))):
        lists, errors = m.lookup_arrow(topics, errors=True)
        want, want_errors = m.lookup_arrow(decoded, errors=True)
        assert raw_rows(lists) == raw_rows(want)
        assert pa.array(errors).to_pylist() == pa.array(want_errors).to_pylist()
        try:
            expected: object = raw_rows(m.lookup_arrow(decoded))
        except tm.InvalidTopic as e:
            expected = str(e)
        try:
            got: object = raw_rows(m.lookup_arrow(topics))
        except tm.InvalidTopic as e:
            got = str(e)
        assert got == expected


def test_a_dictionary_picks_a_group_member_per_row() -> None:
    """With a group, each row of a dictionary gets its own pick, as the same topics as plain
    strings do: one lookup per value would give every row of a value the same member."""
    def grouped() -> tm.Matcher:
        m = tm.Matcher("mqtt", "cstrie", group_policy="round_robin")
        for member in ("x", "y", "z"):
            m.subscribe("$share/g/a/#", member)
        return m

    keys = pa.array([0, 1, 0, 0, 1, 0, 0], pa.int8())
    column = pa.DictionaryArray.from_arrays(keys, pa.array(["a/b", "a/c"]))
    by_dictionary, by_plain = grouped(), grouped()
    got = names(by_dictionary, by_dictionary.lookup_arrow(column))
    assert got == names(by_plain, by_plain.lookup_arrow(column.cast(pa.string())))
    assert len({tuple(row or []) for row in got}) == 3


def test_lookup_arrow_takes_pandas_columns_of_strings() -> None:
    """A pandas Series or Index of an Arrow-backed, string, categorical or object dtype, its
    `.array`, and a frame of one such column."""
    pd = pytest.importorskip("pandas")
    m = tm.Matcher("mqtt", "trie")
    m.subscribe("a/+", "x")
    want = [["x"], None, []]
    for dtype in (pd.ArrowDtype(pa.string()), pd.ArrowDtype(pa.large_string()),
                  "string[pyarrow]", "string[python]"):
        column = pd.Series(["a/b", None, "c"], dtype=dtype)
        assert names(m, m.lookup_arrow(column)) == want, dtype
        assert names(m, m.lookup_arrow(column.array)) == want, dtype
        assert names(m, m.lookup_arrow(pd.Index(column))) == want, dtype
        assert names(m, m.lookup_arrow(pd.DataFrame({"topic": column}))) == want, dtype
    categories = pd.Series(["a/b", None, "c", "a/b"], dtype="category")
    assert names(m, m.lookup_arrow(categories)) == [*want, ["x"]]
    # A column of Python strings is converted, as pandas 3.0's own Arrow interface does; a
    # missing value (None or NaN) is a null topic.
    objects = pd.Series(["a/b", None, "c", float("nan")], dtype=object)
    assert names(m, m.lookup_arrow(objects)) == [*want, None]
    with pytest.raises(TypeError):
        m.lookup_arrow(pd.Series(["a/b", 3], dtype=object))
    with pytest.raises(TypeError, match="string column|string, large_string"):
        m.lookup_arrow(pd.Series([1, 2]))


def assert_arrow_rows_in_place(m: tm.Matcher, topics: list[str | None], bad_topic: str,
                               bad_at: tuple[int, ...]) -> None:
    """`lookup_arrow` gives each topic's row as `lookup` does, a null where the topic is null;
    with `bad_topic` at the rows `bad_at`, it names the first in `InvalidTopic`, and with
    `errors=True` gives those rows as nulls and their reasons."""
    want = [None if t is None else sorted(map(str, m.lookup(t))) for t in topics]
    assert names(m, m.lookup_arrow(pa.array(topics, pa.string()))) == want
    bad = list(topics)
    for at in bad_at:
        bad[at] = bad_topic
    with pytest.raises(tm.InvalidTopic, match=rf"topic at index {bad_at[0]}: "):
        m.lookup_arrow(pa.array(bad, pa.string()))
    lists, errors = m.lookup_arrow(pa.array(bad, pa.large_string()), errors=True)
    assert names(m, lists) == [None if i in bad_at else w for i, w in enumerate(want)]
    reasons = pa.array(errors).to_pylist()
    assert [i for i, r in enumerate(reasons) if r is not None] == list(bad_at)


@pytest.mark.parametrize("algorithm", ["cstrie", "inverted_bitmap"])
def test_lookup_arrow_long_arrays_keep_every_row_in_place(algorithm: str) -> None:
    """Arrays longer than one batch of the engine: every row, null and error where it is, the
    invalid topic named by its index however far in, and rows as `lookup` gives them."""
    m = tm.Matcher("mqtt", algorithm)
    for i in range(40):
        m.subscribe(f"s/{i % 7}/+", i)
        m.subscribe("s/#", f"all-{i % 3}")
    m.subscribe("s/1/+", 1)  # a subscriber under two patterns: each row must hold it once
    topics: list[str | None] = [f"s/{i % 9}/{i}" for i in range(2_000)]
    for at in (0, 255, 256, 700, 1_999):
        topics[at] = None
    assert_arrow_rows_in_place(m, topics, "s/+/x", (1_301, 1_302, 1_304))


@pytest.mark.parametrize("algorithm", ["cstrie", "trie"])
def test_lookup_arrow_high_fan_out_rows_stay_in_place(algorithm: str) -> None:
    """Topics of thousands of subscribers each are looked up in windows of fewer rows (their
    ids within the thread's kept buffer): every row, null and error still where it is."""
    m = tm.Matcher("mqtt", algorithm)
    for i in range(1_500):
        m.subscribe("s/#", i)
        m.subscribe(f"s/{i % 7}/+", i)  # each row holds these subscribers once
    topics: list[str | None] = [f"s/{i % 9}/{i}" for i in range(600)]
    m.lookup_arrow(pa.array(topics, pa.string()))  # the matcher learns its rows' size
    for at in (0, 173, 174, 348, 599):
        topics[at] = None
    assert_arrow_rows_in_place(m, topics, "s/#/x", (175, 176, 521))


@pytest.mark.parametrize("algorithm", ["cstrie", "trie"])
def test_lookup_many_of_high_fan_out_rows_in_parts(algorithm: str) -> None:
    """A batch of topics of thousands of subscribers each is looked up, resolved to objects and
    made into rows in parts: every row as `lookup` gives it, with fields too, and an invalid
    topic in a later part raises."""
    m = tm.Matcher("mqtt", algorithm)
    for i in range(1_500):
        m.subscribe("s/#", i)
        m.subscribe(f"s/{i % 7}/+", f"n{i}")
        m.subscribe(f"s/{i % 5}/#", f"k{i}", where={"k": i % 3})
    topics = [f"s/{i % 9}/{i}" for i in range(600)]
    m.lookup_many(topics)  # the matcher learns its rows' size
    want = [sorted(map(str, m.lookup(t))) for t in topics]
    assert [sorted(map(str, row)) for row in m.lookup_many(topics)] == want
    fields = [{"k": i % 4} for i in range(600)]
    want = [sorted(map(str, m.lookup(t, fields=f))) for t, f in zip(topics, fields)]
    assert [sorted(map(str, row)) for row in m.lookup_many(topics, fields=fields)] == want
    with pytest.raises(tm.InvalidTopic):
        m.lookup_many([*topics[:500], "s/#/x", *topics[500:]])


def test_a_batch_made_in_parts_is_out_of_reach_until_whole() -> None:
    """Between the parts of a batch (the GIL released for each part's lookup), another thread
    walking every object the collector tracks never meets the batch's list half made; the list
    is tracked once returned."""
    m = tm.Matcher("mqtt", "cstrie")
    for i in range(1_500):
        m.subscribe("s/#", i)
        m.subscribe(f"s/{i % 7}/+", f"n{i}")
    topics = [f"s/{i % 9}/{i}" for i in range(600)]
    m.lookup_many(topics)  # the matcher learns its rows' size: parts of about 150 topics
    done = threading.Event()
    seen = []

    def walk() -> None:
        while not done.is_set():
            for obj in gc.get_objects():
                if type(obj) is list and len(obj) == len(topics):
                    seen.append(sum(1 for row in obj if row is None))

    walker = threading.Thread(target=walk)
    walker.start()
    try:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            rows = m.lookup_many(topics)
            assert gc.is_tracked(rows) and len(rows) == len(topics)
    finally:
        done.set()
        walker.join()
    assert seen.count(0) == len(seen)


def test_a_signal_stops_a_long_batch_between_parts(stops_on_signal: Any) -> None:
    """A long batch runs in parts and runs pending signal handlers between them: a handler that
    raises (as Ctrl-C's does) stops the batch soon after the signal, not after its last
    topic, and the matcher answers as before."""
    m = tm.Matcher("amqp", "naive")
    for i in range(2_000):
        m.subscribe(f"a.{i}.*.x", i)
    topics, want = stops_on_signal(
        m.lookup_many, lambda count: [f"a.{i % 3_000}.c.x" for i in range(count)])
    assert m.lookup_many(topics) == want


def slow_matcher() -> tm.Matcher:
    """A matcher whose lookups are long (a naive scan of 2,000 patterns), nothing measured."""
    m = tm.Matcher("amqp", "naive")
    for i in range(2_000):
        m.subscribe(f"a.{i}.*.x", i)
    return m


def test_a_first_long_batch_stops_on_a_signal(stops_on_signal: Any) -> None:
    """A matcher's first batch, with no cost measured yet, is not one long part: its first
    part is short and sizes the rest, so a signal stops it too. Each call below is a fresh
    matcher's first."""
    topics, want = stops_on_signal(
        lambda batch: slow_matcher().lookup_many(batch),
        lambda count: [f"a.{i % 3_000}.c.x" for i in range(count)])
    assert slow_matcher().lookup_many(topics) == want


@pytest.mark.parametrize("encoding", ["plain", "dictionary"])
def test_a_signal_stops_a_long_arrow_batch(stops_on_signal: Any, encoding: str) -> None:
    """`lookup_arrow` runs pending signal handlers once per 50 ms of its work: a handler that
    raises stops it soon after the signal, for a plain array and for a dictionary's values."""
    m = slow_matcher()

    def column(count: int) -> pa.Array:
        topics = pa.array([f"a.{i % (count // 2)}.c.{i % 5}x" for i in range(count)])
        return topics.dictionary_encode() if encoding == "dictionary" else topics

    topics, want = stops_on_signal(m.lookup_arrow, column)
    assert pa.array(m.lookup_arrow(topics)).equals(pa.array(want))


@pytest.mark.parametrize("call", ["lookup_many", "lookup_arrow"])
def test_a_first_long_batch_lets_other_threads_run(call: str) -> None:
    """With no cost measured yet, a batch is estimated at a nominal cost per topic: a long
    first batch releases the GIL, as later ones do, and a Python thread runs in its middle."""
    topics = [f"a.{i}.c.x" for i in range(3_000)]
    batch: Any = pa.array(topics) if call == "lookup_arrow" else topics
    fresh = iter([slow_matcher(), slow_matcher()])  # made before the timing: only the calls
    calls, inside = ticks_inside(lambda: getattr(next(fresh), call)(batch), 2, 0.3, 1e-4)
    assert all(end - start > 0.02 for start, end in calls), "the calls are too short"
    assert inside, "no other thread ran during a first long batch"


def test_lookup_arrow_picks_one_group_member_per_row_around_invalid_topics() -> None:
    """A batch that stops at an invalid topic keeps the rows before it: each row's group pick
    is made once, in row order, as the same calls of `lookup` make them."""
    def grouped() -> tm.Matcher:
        m = tm.Matcher("mqtt", "cstrie", group_policy="round_robin")
        for member in ("x", "y", "z"):
            m.subscribe("$share/g/a/#", member)
        return m

    arrow, one_by_one = grouped(), grouped()
    topics = ["a/1", "a/+", "a/2", None, "#", "a/3", "a/4"]
    lists, errors = arrow.lookup_arrow(pa.array(topics, pa.string()), errors=True)
    table = arrow.subscriber_table()
    got = [None if r is None else [table[i] for i in r] for r in pa.array(lists).to_pylist()]
    want = [None if t is None or "+" in t or "#" in t else one_by_one.lookup(t) for t in topics]
    assert got == want
    assert [r is not None for r in pa.array(errors).to_pylist()] == [
        False, True, False, False, True, False, False]


def test_lookup_arrow_rejects_what_is_not_a_string_array() -> None:
    m = tm.Matcher("amqp")
    with pytest.raises(TypeError, match="Arrow string"):
        m.lookup_arrow(["a.b"])  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="string"):
        m.lookup_arrow(pa.array([1, 2]))
    big = pa.array(["x" * 300])
    with pytest.raises(tm.LimitExceeded, match="topic at index 0"):
        m.lookup_arrow(big)
    assert pa.array(m.lookup_arrow(pa.array([], pa.string()))).to_pylist() == []

    class Failing:
        def __init__(self, method: str) -> None:
            setattr(self, method, self.export)

        def export(self, requested_schema: object = None) -> object:
            raise KeyError("the exporter's own error")

    # An object whose own export fails: its error, not a TypeError about the input's type.
    for method in ("__arrow_c_array__", "__arrow_c_stream__"):
        with pytest.raises(KeyError, match="the exporter's own error"):
            m.lookup_arrow(Failing(method))  # type: ignore[call-overload]


def ticks_inside(call: Callable[[], object], times: int, margin: float,
                 pause: float) -> tuple[list[tuple[float, float]], list[float]]:
    """Makes `call` `times` times while another Python thread notes the time whenever it runs
    (sleeping `pause` s between notes); the calls' (start, end), and the notes taken inside a
    call, `margin` of its time away from either end. Native code holding the GIL never yields
    it, so the other thread runs inside a call only if the call released it; a hand-over
    before a call starts or after it returns (on a busy machine the waiting thread may run for
    milliseconds there) stays out of the margins."""
    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.perf_counter())
            if pause:
                time.sleep(pause)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    thread = threading.Thread(target=tick)
    thread.start()
    calls = []
    try:
        time.sleep(0.01)
        for _ in range(times):
            start = time.perf_counter()
            call()
            calls.append((start, time.perf_counter()))
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    inside = [t for t in ticks for start, end in calls
              if start + margin * (end - start) < t < end - margin * (end - start)]
    return calls, inside


def test_a_long_call_lets_other_threads_run() -> None:
    # A naive scan of many patterns is long: the call releases the GIL, so a Python thread
    # runs in the middle of it.
    m = tm.Matcher("amqp", "naive")
    for i in range(200_000):
        m.subscribe(f"a.{i}.*.x", i)
    topic = "a.b.c.d"
    for _ in range(3):
        m.lookup(topic)  # measured: later calls know they are long
    calls, inside = ticks_inside(lambda: m.lookup(topic), 5, 0.4, 0)
    assert all(end - start > 3e-3 for start, end in calls), "the calls are too short"
    assert inside, "no other thread ran during a long call"


def test_threads_share_one_matcher_under_churn() -> None:
    m = tm.Matcher("amqp", "cstrie")
    for i in range(50):
        m.subscribe(f"t.{i}.*", i)
    topics = [f"t.{i % 50}.x" for i in range(500)]
    arrow_topics = pa.array(topics)
    errors: list[str] = []

    def churn() -> None:
        for k in range(300):
            sid = m.subscribe(f"t.{k % 50}.x", f"extra-{k}")
            m.unsubscribe(sid)

    def read() -> None:
        for _ in range(30):
            for row, topic in zip(m.lookup_many(topics), topics, strict=True):
                base = int(topic.split(".")[1])
                if base not in row or any(isinstance(s, str) and not s.startswith("extra-")
                                          for s in row):
                    errors.append(f"lookup_many {topic}: {row}")
            lists = pa.array(m.lookup_arrow(arrow_topics)).to_pylist()
            table = m.subscriber_table()
            for row, topic in zip(lists, topics, strict=True):
                if int(topic.split(".")[1]) not in {table[i] for i in row}:
                    errors.append(f"lookup_arrow {topic}")

    threads = [threading.Thread(target=f) for f in (churn, read, read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors[:5]
