"""Content-based routing: FieldMatcher and Matcher(where=..., fields=...)."""

from __future__ import annotations

import math
import pickle
import threading
from collections import UserDict
from typing import Any, Literal

import pytest

import topicmatch as tm

SEED_SUBSCRIPTIONS: list[dict[str, str | tm.Present]] = [
    {"currency": "USD", "urgent": tm.PRESENT},
    {"currency": "EUR"},
    {"market": "forex", "currency": "EUR"},
    {"urgent": tm.PRESENT},
]
SEED_MESSAGES: dict[str, dict[str, object]] = {
    "A": {"currency": "JPY", "market": "forex", "slow": None},
    "B": {"currency": "JPY", "urgent": None},
    "C": {"market": "forex", "currency": "EUR"},
}


def seed_matcher(mode: Literal["all", "any"]) -> tm.FieldMatcher:
    fm = tm.FieldMatcher()
    for i, criteria in enumerate(SEED_SUBSCRIPTIONS):
        fm.subscribe(criteria, i, mode=mode)
    return fm


def test_seed_worked_example() -> None:
    """The "Field Matching Example" of "Fast topic matching" and "High-speed message matching":
    hit counts, then AND and OR results."""
    and_, or_ = seed_matcher("all"), seed_matcher("any")
    hits = {name: and_.hits(msg) for name, msg in SEED_MESSAGES.items()}
    assert hits == {"A": {2: 1}, "B": {0: 1, 3: 1}, "C": {1: 1, 2: 2}}
    assert {name: or_.hits(msg) for name, msg in SEED_MESSAGES.items()} == hits
    assert {n: sorted(and_.lookup(m)) for n, m in SEED_MESSAGES.items()} == {
        "A": [], "B": [3], "C": [1, 2],
    }
    assert {n: sorted(or_.lookup(m)) for n, m in SEED_MESSAGES.items()} == {
        "A": [2], "B": [0, 3], "C": [1, 2],
    }


def test_issue_walkthrough() -> None:
    fm = tm.FieldMatcher()
    a = fm.subscribe({"currency": "USD", "urgent": tm.PRESENT}, "alice", mode="all")
    fm.subscribe({"currency": ("USD", "GBP")}, "bob", mode="any")
    fm.subscribe({"price": tm.gt(100), "qty": tm.le(5)}, "carol")
    d = fm.subscribe({"a": 1, "b": 2, "c": 3}, "dave", mode=2)
    assert fm.lookup({"currency": "GBP", "urgent": True}) == ["bob"]
    assert sorted(fm.lookup({"currency": "USD", "urgent": False})) == ["alice", "bob"]
    assert fm.lookup({"price": 100.5, "qty": 5}) == ["carol"]
    assert fm.lookup({"price": 100, "qty": 5}) == []
    assert fm.lookup({"a": 1, "c": 3.0, "zzz": "ignored"}) == ["dave"]
    assert fm.hits({"a": 1, "currency": "USD", "price": 1000}) == {
        "dave": 1, "alice": 1, "bob": 1, "carol": 1,
    }
    assert len(fm) == 4
    assert fm.subscribe({"a": 1, "b": 2, "c": 3}, "dave", mode=2) == d
    assert fm.unsubscribe(a) is True and fm.unsubscribe(a) is False
    assert len(fm) == 3
    assert fm.lookup_many([{"currency": "GBP"}, {}, {"b": 2, "c": 3}]) == [["bob"], [], ["dave"]]
    assert fm.lookup_many(iter([])) == []
    assert repr(fm) == "FieldMatcher(subscriptions=3)"


def test_values_compare_exactly_and_bools_are_their_own_kind() -> None:
    fm = tm.FieldMatcher()
    fm.subscribe({"n": 1}, "int")
    fm.subscribe({"n": "1"}, "str")
    fm.subscribe({"n": True}, "bool")
    fm.subscribe({"n": 2.5}, "float")
    assert fm.lookup({"n": 1.0}) == ["int"]
    assert fm.lookup({"n": 1}) == ["int"]
    assert fm.lookup({"n": "1"}) == ["str"]
    assert fm.lookup({"n": True}) == ["bool"]  # True is not 1, unlike Python's ==
    assert fm.lookup({"n": 2.5}) == ["float"]
    big = tm.FieldMatcher()
    big.subscribe({"n": tm.gt(2.0**53)}, "big")
    assert big.lookup({"n": 2**53 + 1}) == ["big"]
    assert big.lookup({"n": 2**53}) == []
    assert big.lookup({"n": True}) == []


def test_integers_run_over_signed_and_unsigned_64_bits() -> None:
    fm = tm.FieldMatcher()
    fm.subscribe({"n": tm.gt(0)}, "positive")
    fm.subscribe({"n": tm.ge(2**63)}, "top half")
    fm.subscribe({"n": 2**64 - 1}, "max")
    fm.subscribe({"n": tm.lt(2.0**64)}, "below 2**64")
    assert sorted(fm.lookup({"n": 2**63})) == ["below 2**64", "positive", "top half"]
    assert sorted(fm.lookup({"n": 2**64 - 1})) == ["below 2**64", "max", "positive", "top half"]
    assert sorted(fm.lookup({"n": 2**63 - 1})) == ["below 2**64", "positive"]
    assert sorted(fm.lookup({"n": 2.0**63})) == ["below 2**64", "positive", "top half"]
    assert fm.lookup({"n": 2**64}) == []  # past the range: present, compares with nothing
    back = pickle.loads(pickle.dumps(fm))
    assert back.subscriptions() == fm.subscriptions()
    assert back.subscriptions()[2][1] == {"n": 2**64 - 1}
    assert back.lookup({"n": 2**64 - 1}) == fm.lookup({"n": 2**64 - 1})
    # Pivoted (checked, not counted) criteria compare the same way.
    two = tm.FieldMatcher()
    two.subscribe({"k": "x", "n": tm.gt(2**63 + 5)}, "pivot")
    assert two.lookup({"k": "x", "n": 2**63 + 6}) == ["pivot"]
    assert two.lookup({"k": "x", "n": 2**63 + 5}) == []
    assert two.lookup({"k": "x", "n": 1e300}) == ["pivot"]


def test_message_values_of_other_kinds_are_present_only() -> None:
    fm = tm.FieldMatcher()
    fm.subscribe({"x": tm.PRESENT}, "present")
    fm.subscribe({"x": tm.ge(0)}, "number")
    fm.subscribe({"x": ("a", 0)}, "in")
    for value in (None, b"a", [0], {"a": 0}, 2**70, math.nan, "\ud800"):
        assert fm.lookup({"x": value}) == ["present"], value
    assert sorted(fm.lookup({"x": 0})) == ["in", "number", "present"]
    assert sorted(fm.lookup(UserDict({"x": 5}))) == ["number", "present"]


class Index:
    """An integer by Python's protocol alone (``__index__``), as numpy's integer scalars are."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_integers_by_the_index_protocol_are_integers() -> None:
    fm = tm.FieldMatcher()
    fm.subscribe({"n": Index(5)}, "five")
    fm.subscribe({"n": tm.gt(Index(2**63))}, "above")
    assert fm.subscriptions()[0][1] == {"n": 5}
    assert fm.lookup({"n": Index(5)}) == ["five"] and fm.lookup({"n": 5.0}) == ["five"]
    assert fm.lookup({"n": Index(2**64 - 1)}) == ["above"]
    assert fm.lookup({"n": Index(2**64)}) == []  # past the range, as an int there
    with pytest.raises(tm.InvalidPattern, match="outside -2"):
        fm.subscribe({"n": Index(2**64)}, "x")
    numpy = pytest.importorskip("numpy")
    assert fm.lookup({"n": numpy.int64(5)}) == fm.lookup({"n": numpy.uint8(5)}) == ["five"]
    flags = tm.FieldMatcher()
    flags.subscribe({"b": True}, "true")
    flags.subscribe({"b": 1}, "one")
    flags.subscribe({"b": tm.PRESENT}, "present")
    # numpy's bool refuses __index__: another kind, present only.
    assert flags.lookup({"b": numpy.True_}) == ["present"]


@pytest.mark.parametrize(
    ("criteria", "mode", "needle"),
    [
        ({"a": 1}, "some", "unknown mode"),
        ({"a": 1}, True, "unknown mode"),
        ({"a": 1}, 1.5, "unknown mode"),
        ({"a": 1, "b": 2}, 3, "between 1 and 2"),
        ({"a": 1, "b": 2}, 0, "between 1 and 2"),
        ({"a": 1, "b": 2}, -1, "between 1 and 2"),
        ({}, "all", "at least one field"),
        ({"a": ()}, "all", "at least one value"),
        ({"a": set()}, "any", "at least one value"),
        ({"a": math.nan}, "all", "NaN"),
        ({"a": None}, "all", "not NoneType"),
        ({"a": [[1]]}, "all", "not list"),
        ({"a": b"x"}, "all", "not bytes"),
        ({"a": 2**64}, "all", "outside -2**63 to 2**64 - 1"),
        ({"a": -(2**63) - 1}, "all", "outside -2**63 to 2**64 - 1"),
        ({"a": 1, "b": 2}, 2**70, "at least 1180591620717411303424 of 2"),
        ({"a": 1, "b": 2}, -(2**70), "at least -1180591620717411303424 of 2"),
    ],
)
def test_bad_criteria_raise_invalid_pattern(criteria: dict, mode: object, needle: str) -> None:
    fm = tm.FieldMatcher()
    with pytest.raises(tm.InvalidPattern, match="invalid criteria") as err:
        fm.subscribe(criteria, "x", mode=mode)  # type: ignore[arg-type]
    assert needle in str(err.value)
    assert isinstance(err.value, ValueError) and isinstance(err.value, tm.TopicMatchError)
    assert len(fm) == 0


@pytest.mark.parametrize("bad", ["x", True, math.nan, None, (1, 2)])
@pytest.mark.parametrize("op", [tm.lt, tm.le, tm.gt, tm.ge])
def test_comparison_needs_a_number(op: object, bad: object) -> None:
    with pytest.raises(tm.InvalidPattern, match="invalid criteria"):
        op(bad)  # type: ignore[operator]


class Reentrant:
    """A message value whose ``__index__`` changes the message it is read from."""

    def __init__(self, message: dict[str, Any], change: str) -> None:
        self.message, self.change = message, change

    def __index__(self) -> int:
        if self.change == "grow":
            self.message["zz"] = 1
        else:
            self.message.clear()
        return 3


@pytest.mark.parametrize("change", ["grow", "clear"])
def test_a_message_changed_while_it_is_read_is_read_as_it_was(change: str) -> None:
    fm = tm.FieldMatcher()
    fm.subscribe({"a": 3}, "s")
    m = tm.Matcher("mqtt", "cstrie")
    m.subscribe("t", "plain")
    m.subscribe("t", "w", where={"a": 3})
    calls = [
        lambda d: fm.lookup(d), lambda d: fm.hits(d), lambda d: fm.lookup_many([d]),
        lambda d: m.lookup("t", fields=d), lambda d: m.matches_any("t", fields=d),
        lambda d: m.lookup_many(["t"], fields=[d]), lambda d: m.lookup_groups("t", fields=d),
    ]
    for call in calls:
        d: dict[str, Any] = {}
        d.update(a=Reentrant(d, change), b=1)
        call(d)  # the items it had when the call began; no panic
    d = {}
    d.update(a=Reentrant(d, change), b=1)
    assert fm.lookup(d) == ["s"]
    d = {}
    d.update(a=Reentrant(d, change), b=1)
    assert sorted(m.lookup("t", fields=d)) == ["plain", "w"]


def test_an_exception_from_a_values_index_other_than_type_error_propagates() -> None:
    class Interrupting:
        def __index__(self) -> int:
            raise KeyboardInterrupt

    class Refusing:
        def __index__(self) -> int:
            raise TypeError("not an integer")

    fm = tm.FieldMatcher()
    fm.subscribe({"a": 1}, "s")
    with pytest.raises(KeyboardInterrupt):
        fm.lookup({"a": Interrupting()})
    with pytest.raises(KeyboardInterrupt):
        fm.subscribe({"a": Interrupting()}, "t")
    assert fm.lookup({"a": Refusing()}) == []  # another kind: equal to nothing
    with pytest.raises(tm.TopicMatchError, match="not .*Refusing"):
        fm.subscribe({"a": Refusing()}, "t")
    assert len(fm) == 1


def test_type_errors() -> None:
    fm = tm.FieldMatcher()
    fm.subscribe({"a": 1}, "x")
    for bad in (None, [("a", 1)], "a=1", 1):
        with pytest.raises(TypeError, match="mapping of str keys"):
            fm.lookup(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="mapping of str keys"):
            fm.subscribe(bad, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the keys of .* must be str"):
        fm.lookup({1: 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="the keys of .* must be str"):
        fm.subscribe({1: 1}, "x")  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="single mapping"):
        fm.lookup_many({"a": 1})  # type: ignore[dict-item]
    m = tm.Matcher("mqtt")
    with pytest.raises(TypeError, match="single mapping"):
        m.lookup_many(["t"], fields={"a": 1})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="mapping of str keys"):
        fm.lookup_many([{"a": 1}, None])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="subscriber"):
        fm.subscribe({"a": 1}, 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="subscription_id must be int"):
        fm.unsubscribe(True)
    with pytest.raises(TypeError, match="subscription_id must be int"):
        fm.unsubscribe("1")  # type: ignore[arg-type]
    for no_id in (-1, 2**64, 2**70):
        assert fm.unsubscribe(no_id) is False
    assert len(fm) == 1


def test_criteria_objects() -> None:
    assert repr(tm.PRESENT) == "PRESENT"
    assert pickle.loads(pickle.dumps(tm.PRESENT)) is tm.PRESENT
    assert isinstance(tm.PRESENT, tm.Present) and isinstance(tm.gt(1), tm.Comparison)
    c = tm.gt(100)
    assert (c.op, c.value, repr(c)) == ("gt", 100, "gt(100)")
    assert tm.le(1.0).value == 1 and tm.lt(0.5).value == 0.5
    assert c == tm.gt(100.0) and c != tm.ge(100) and hash(c) == hash(tm.gt(100))
    assert pickle.loads(pickle.dumps(c)) == c


def test_pickle_keeps_criteria_modes_ids_and_subscribers() -> None:
    fm = tm.FieldMatcher()
    ids = [
        fm.subscribe({"a": ("x", 2.5, True), "b": tm.PRESENT}, "s1", mode="any"),
        fm.subscribe({"p": tm.lt(3), "q": tm.ge(-1.5), "r": "z"}, 7, mode=2),
        fm.subscribe({"a": "x"}, "s1"),
    ]
    fm.unsubscribe(ids[2])
    back = pickle.loads(pickle.dumps(fm))
    assert back.subscriptions() == fm.subscriptions()
    assert back.subscriptions()[0] == (
        ids[0], {"a": (True, 2.5, "x"), "b": tm.PRESENT}, "any", "s1",
    )
    message = {"a": 2.5, "p": 0, "q": 0}
    assert back.hits(message) == fm.hits(message) == {"s1": 1, 7: 2}
    assert back.lookup(message) == fm.lookup(message)
    assert back.subscribe({"new": 1}, "n") > ids[-1]
    assert back.unsubscribe(ids[1]) is True


def test_a_message_field_given_twice_keeps_its_last_value() -> None:
    # A `str` subclass may hash apart from an equal text: a dict then holds both keys.
    class Odd(str):
        __slots__ = ()

        def __hash__(self) -> int:
            return 12345

    fm = tm.FieldMatcher()
    fm.subscribe({"k": 1}, "one")
    fm.subscribe({"k": 2}, "two")
    for message, want in [({"k": 1, Odd("k"): 2}, ["two"]), ({Odd("k"): 2, "k": 1}, ["one"]),
                          ({"j": 0, "k": 1, Odd("k"): 2, "l": 0}, ["two"])]:
        assert len(message) >= 2
        assert fm.lookup(message) == want, message
        assert fm.lookup_many([message]) == [want], message
        assert fm.hits(message) == {want[0]: 1}, message


def test_results_are_the_subscribed_objects() -> None:
    fm = tm.FieldMatcher()
    big, name = 2**62 + 7, "".join(["sub", "scriber"])
    fm.subscribe({"k": 1}, big)
    fm.subscribe({"k": 1}, name, mode="any")

    class Tagged(int):
        pass

    fm.subscribe({"k": 1}, Tagged(5))
    message = {"k": 1}
    for row in (fm.lookup(message), *fm.lookup_many([message, message])):
        assert sorted(row, key=str) == sorted([big, name, 5], key=str)
        assert any(x is big for x in row) and any(x is name for x in row)
        # A subclass instance is not kept: it may carry state; an exact int of its value is.
        assert [type(x) for x in row if x == 5] == [int]
    hits = fm.hits(message)
    assert hits == {big: 1, name: 1, 5: 1}
    assert any(x is big for x in hits)


def test_a_subscriber_that_left_is_not_delivered_and_new_ones_are() -> None:
    fm = tm.FieldMatcher()
    message = {"k": 1}
    for round_ in range(5):
        values = [f"r{round_}-{i}" for i in range(50)]
        ids = [fm.subscribe({"k": 1}, v) for v in values]
        # A second subscription of each: it leaves with the last one only.
        extra = [fm.subscribe({"k": tm.PRESENT}, v) for v in values]
        assert sorted(fm.lookup(message)) == sorted(values)
        for sid in ids:
            assert fm.unsubscribe(sid)
        assert sorted(fm.lookup_many([message])[0]) == sorted(values)
        for sid in extra:
            assert fm.unsubscribe(sid)
        assert fm.lookup(message) == [] and fm.lookup_many([message]) == [[]]
        assert fm.hits(message) == {}
    assert len(fm) == 0


def test_a_batch_made_in_several_parts_equals_lookups_one_by_one() -> None:
    # Messages of 12,000 subscribers each: a batch of 40 is made in parts once the matcher
    # has measured how many subscribers a message finds.
    fm = tm.FieldMatcher()
    for i in range(24_000):
        fm.subscribe({"region": i % 2}, i)
    messages = [{"region": i % 3} for i in range(40)]
    want = [fm.lookup(m) for m in messages]
    assert [len(row) for row in want[:3]] == [12_000, 12_000, 0]
    for _ in range(2):
        assert fm.lookup_many(messages) == want


def test_lookups_from_threads() -> None:
    fm = seed_matcher("any")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(200):
                got = fm.lookup_many(list(SEED_MESSAGES.values()))
                assert [sorted(x) for x in got] == [[2], [0, 3], [1, 2]]
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(200):
        sid = fm.subscribe({"tmp": i}, "tmp")
        fm.unsubscribe(sid)
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize(
    ("algorithm", "cache_capacity"),
    # And the cstrie with its result cache: a topic's cached matches are filtered again by
    # each message's fields.
    [(a, None) for a in tm.ALGORITHMS] + [("cstrie", 16)],
    ids=[*tm.ALGORITHMS, "cstrie-cached"],
)
def test_matcher_where(algorithm: str, cache_capacity: int | None) -> None:
    m = tm.Matcher(dialect="amqp", algorithm=algorithm, cache_capacity=cache_capacity)
    eur = m.subscribe("forex.*", "eur-desk", where={"currency": "EUR"})
    assert m.subscribe("forex.*", "eur-desk", where={"currency": "EUR"}) == eur
    m.subscribe("#", "big", where={"qty": tm.gt(100), "urgent": tm.PRESENT}, mode="any")
    m.subscribe("forex.#", "all-forex")
    assert len(m) == 3
    assert sorted(m.lookup("forex.spot", fields={"currency": "EUR"})) == ["all-forex", "eur-desk"]
    assert m.lookup("forex.spot", fields={"currency": "USD"}) == ["all-forex"]
    assert m.lookup("forex.spot") == ["all-forex"]
    assert m.lookup("bond.x", fields={"currency": "EUR", "qty": 500}) == ["big"]
    got = m.lookup_many(
        ["forex.spot", "bond.x", "forex.spot"],
        fields=[{"currency": "EUR"}, {"urgent": 1}, None],
    )
    assert [sorted(x) for x in got] == [["all-forex", "eur-desk"], ["big"], ["all-forex"]]
    assert m.lookup_many(["bond.x"]) == [[]]
    assert m.matches_any("bond.x") is False
    assert m.matches_any("bond.x", fields={"qty": 101}) is True
    with pytest.raises(ValueError, match="one mapping"):
        m.lookup_many(["a", "b"], fields=[{}])
    with pytest.raises(TypeError, match="mode applies"):
        m.subscribe("a", "x", mode="any")
    with pytest.raises(tm.InvalidPattern, match="invalid criteria"):
        m.subscribe("a", "x", where={"a": tm.PRESENT}, mode=2)
    with pytest.raises(TypeError, match="mapping"):
        m.lookup("a", fields=[("a", 1)])  # type: ignore[arg-type]
    nats = tm.Matcher("nats", algorithm)
    nats.subscribe("a.*", "x", where={"k": 1})
    assert nats.lookup("a.b", fields={"k": 1.0}) == ["x"]
    with pytest.raises(tm.InvalidTopic):
        nats.lookup("a..b", fields={"k": 1})
    assert len(m) == 3
    back = pickle.loads(pickle.dumps(m))
    assert back.subscriptions() == m.subscriptions()
    big = next(i for i, _, s in m.subscriptions() if s == "big")
    assert m.filters() == [
        (eur, {"currency": "EUR"}, "all"),
        (big, {"qty": tm.gt(100), "urgent": tm.PRESENT}, "any"),
    ]
    assert back.filters() == m.filters()
    assert back.lookup("forex.spot", fields={"currency": "EUR"}) == m.lookup(
        "forex.spot", fields={"currency": "EUR"}
    )
    assert back.lookup("forex.spot", fields={"currency": "USD"}) == ["all-forex"]
    assert back.subscribe("forex.*", "eur-desk", where={"currency": "EUR"}) == eur
    assert m.unsubscribe(eur) is True
    assert m.lookup("forex.spot", fields={"currency": "EUR"}) == ["all-forex"]


def test_a_signal_stops_a_long_field_batch_between_parts(stops_on_signal: Any) -> None:
    """`FieldMatcher.lookup_many` runs a long batch in parts and runs pending signal handlers
    between them, as `Matcher.lookup_many` does; the matcher answers as before."""
    fm = tm.FieldMatcher()
    # Every message meets one criterion of each of 20,000 subscriptions and all of none: long
    # lookups with empty rows.
    for i in range(20_000):
        fm.subscribe({"x": tm.gt(i), "y": "no"}, i)
    message = {"x": 10**9, "y": "yes"}
    messages, want = stops_on_signal(fm.lookup_many, lambda count: [message] * count)
    assert want == [[]] * len(messages)
    assert fm.lookup_many(messages[:10]) == [[]] * 10
    fm.subscribe({"y": "yes"}, "any")
    assert fm.lookup_many(messages[:3]) == [["any"]] * 3


def test_a_field_matcher_at_the_end_of_its_ids_refuses_rather_than_wraps() -> None:
    fm = tm._native._restore_field_matcher([(1, {"a": 1}, "all", "s")], 2**64 - 2)
    assert fm.subscribe({"b": 1}, "t") == 2**64 - 2
    with pytest.raises(ValueError, match="subscription ids are exhausted"):
        fm.subscribe({"c": 1}, "t")
    assert fm.subscribe({"b": 1}, "t") == 2**64 - 2  # a held pair keeps its id
    assert [s[0] for s in fm.subscriptions()] == [1, 2**64 - 2]
