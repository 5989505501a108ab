"""Hostile input over the whole public API, for every algorithm and dialect.

Any string (empty, huge, deep, NUL, lone surrogates, every separator and wildcard anywhere)
gives a result or a typed ``ValueError`` subclass (``TypeError`` for a wrong type), every
algorithm answers like ``naive``, and a rejected call leaves the matcher exactly as it was.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import topicmatch as tm
from topicmatch import _native

FRAGMENTS = [
    ".", "/", "*", "+", "#", ">", "\0", " ", "\t", "$", "$SYS", "a", "é", "\U0010ffff",
    "\ud800", "\udfff",
]

# Every code point, lone surrogates included.
any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())

hostile_text = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join),
    st.text(any_char, max_size=40),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", ".", "/", "#", "+/", "#.", "é"]),
              st.sampled_from([254, 255, 256, 4096, 4097, 65_535, 65_536, 200_000])),
)

subscriber = st.one_of(
    st.integers(-(2**63), 2**63 - 1), st.text(any_char, max_size=8), st.integers(2**63, 2**70),
)


def state(m: tm.Matcher) -> tuple[int, list[tuple[int, str, Any]]]:
    return len(m), m.subscriptions()


def outcome(call: Any) -> tuple[str, Any]:
    """The result, or the exception's class: never anything but a ValueError or TypeError."""
    try:
        return "ok", call()
    except (ValueError, TypeError) as err:
        return "error", type(err)


def normal(value: Any) -> Any:
    """Lookup results in a canonical order (algorithms may order subscribers differently)."""
    if isinstance(value, list):
        return sorted((normal(v) for v in value), key=repr)
    return value


def typed(kind: type) -> bool:
    """An input error (pattern, topic, subscriber, limit) is a TopicMatchError subclass of
    ValueError; the hostile inputs here are all of the accepted types."""
    return not issubclass(kind, TypeError) and issubclass(kind, tm.TopicMatchError)


op = st.one_of(
    st.tuples(st.just("subscribe"), hostile_text, subscriber),
    st.tuples(st.just("unsubscribe"), st.one_of(st.integers(-5, 40), st.integers(2**64 - 2, 2**70))),
    st.tuples(st.just("lookup"), hostile_text),
    st.tuples(st.just("lookup_many"), st.lists(hostile_text, max_size=4)),
    st.tuples(st.just("matches_any"), hostile_text),
    st.tuples(st.just("pickle")),
)


def apply(m: tm.Matcher, step: tuple[Any, ...]) -> tuple[str, Any]:
    name, *args = step
    if name == "pickle":
        return outcome(lambda: pickle.loads(pickle.dumps(m)).subscriptions())
    return outcome(lambda: getattr(m, name)(*args))


@pytest.mark.parametrize("dialect", tm.DIALECTS)
@given(steps=st.lists(op, max_size=25))
def test_every_algorithm_survives_hostile_calls_like_naive(dialect: str, steps: list[Any]) -> None:
    matchers = {a: tm.Matcher(dialect=dialect, algorithm=a, max_subscriptions=20)
                for a in tm.ALGORITHMS}
    for step in steps:
        results = {}
        for algorithm, m in matchers.items():
            before = state(m)
            kind, value = apply(m, step)
            if kind == "error":
                assert state(m) == before, (algorithm, step)
                assert typed(value), (algorithm, step, value)
            elif step[0] != "subscribe" and step[0] != "unsubscribe":
                assert state(m) == before, (algorithm, step)
            results[algorithm] = (kind, normal(value))
        assert all(r == results["naive"] for r in results.values()), (step, results)
    for m in matchers.values():
        back = pickle.loads(pickle.dumps(m))
        assert back.subscriptions() == m.subscriptions()


# Each limit keyword with its least value (0 for a cap that may allow none).
LIMITS = {"max_topic_bytes": 1, "max_levels": 1, "max_subscriptions": 1, "max_multi_wildcards": 0}
limit_value = st.one_of(
    st.none(), st.integers(-(2**70), 2**70), st.booleans(), st.floats(), st.text(max_size=3),
)


@given(
    dialect=st.one_of(st.sampled_from(tm.DIALECTS), hostile_text),
    algorithm=st.one_of(st.sampled_from(tm.ALGORITHMS), hostile_text),
    limits=st.fixed_dictionaries(
        {}, optional={k: limit_value for k in LIMITS}
    ),
)
def test_construction_gives_a_matcher_or_a_clear_error(
    dialect: str, algorithm: str, limits: dict[str, Any]
) -> None:
    kind, value = outcome(lambda: tm.Matcher(dialect=dialect, algorithm=algorithm, **limits))
    wrong_type = any(v is not None and (isinstance(v, bool) or not isinstance(v, int))
                     for v in limits.values())
    out_of_range = any(isinstance(v, int) and not isinstance(v, bool)
                       and not LIMITS[k] <= v < 2**64 for k, v in limits.items())
    names_ok = dialect in tm.DIALECTS and algorithm in tm.ALGORITHMS
    if kind == "ok":
        assert names_ok and not wrong_type and not out_of_range
        for k, v in limits.items():
            unlimited = k in ("max_subscriptions", "max_multi_wildcards")
            assert value.limits[k] == v or (v is None and not unlimited)
    elif not names_ok:
        assert issubclass(value, ValueError)
    elif wrong_type and not out_of_range:
        assert value is TypeError
    elif out_of_range and not wrong_type:
        assert value is ValueError
    else:
        assert value in (TypeError, ValueError)


@given(pattern=hostile_text, topic=hostile_text,
       dialect=st.one_of(st.sampled_from(tm.DIALECTS), hostile_text))
def test_matches_gives_a_bool_or_a_typed_error(pattern: str, topic: str, dialect: str) -> None:
    kind, value = outcome(lambda: tm.matches(pattern, topic, dialect=dialect))
    if kind == "ok":
        assert isinstance(value, bool)
    elif dialect in tm.DIALECTS:
        assert issubclass(value, tm.TopicMatchError) and issubclass(value, ValueError)


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_limit_errors_name_the_limit_and_its_value(algorithm: str) -> None:
    m = tm.Matcher("mqtt", algorithm, max_topic_bytes=10, max_levels=3, max_subscriptions=1)
    assert m.limits == {"max_topic_bytes": 10, "max_levels": 3, "max_subscriptions": 1,
                        "max_multi_wildcards": None}
    sid = m.subscribe("a/+", 1)
    with pytest.raises(tm.LimitExceeded, match='by mqtt topic "a{11}": max_topic_bytes is 10, got 11'):
        m.lookup("a" * 11)
    with pytest.raises(tm.LimitExceeded, match='by mqtt pattern "a/b/c/d": max_levels is 3, got 4'):
        m.subscribe("a/b/c/d", 1)
    with pytest.raises(tm.LimitExceeded, match='by mqtt pattern "b": max_subscriptions is 1, got 2'):
        m.subscribe("b", 1)
    with pytest.raises(tm.LimitExceeded) as caught:
        m.lookup("x" * 100)
    assert str(caught.value) == (
        f'limit exceeded by mqtt topic "{"x" * 60}... (100 bytes)": max_topic_bytes is 10, got 100'
    )
    assert m.subscribe("a/+", 1) == sid
    assert m.subscriptions() == [(sid, "a/+", 1)]
    default = tm.Matcher("amqp", algorithm).limits
    assert default == {"max_topic_bytes": 255, "max_levels": 4096, "max_subscriptions": None,
                       "max_multi_wildcards": None}
    assert tm.Matcher("nats", algorithm).limits["max_topic_bytes"] == 65_535


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_max_multi_wildcards_refuses_as_rabbitmq_does(algorithm: str) -> None:
    # RabbitMQ's topic binding validation: at most two whole-word '#', '#' inside a word literal.
    m = tm.Matcher("amqp", algorithm, max_multi_wildcards=2)
    assert m.limits["max_multi_wildcards"] == 2
    accepted = ["", "a.b.c", "*.*.*", "#", "a.#", "#.#", "#.a.#", "a#b", "##.##.##"]
    ids = [m.subscribe(p, "q") for p in accepted]
    held = m.subscriptions()
    for refused, count in [("#.#.#", 3), ("#.*.#.*.#", 3), ("a.#.b.#.c.#", 3), ("#.#.#.#", 4)]:
        with pytest.raises(tm.LimitExceeded) as caught:
            m.subscribe(refused, "r")
        assert str(caught.value) == (
            f'limit exceeded by amqp pattern "{refused}": max_multi_wildcards is 2, got {count}'
        )
    with pytest.raises(tm.LimitExceeded, match=r"max_multi_wildcards is 2, got 128"):
        m.subscribe(".".join(["#"] * 128), "r")
    assert m.subscriptions() == held
    assert m.lookup("x.a.y") == ["q"]
    back = pickle.loads(pickle.dumps(m))
    assert back.limits == m.limits
    with pytest.raises(tm.LimitExceeded):
        back.subscribe("#.#.#", "r")
    assert [i for i, _, _ in back.subscriptions()] == ids
    # No cap by default: 128 '#' fill the 255 bytes of an AMQP short string.
    tm.Matcher("amqp", algorithm).subscribe(".".join(["#"] * 128), "r")
    none = tm.Matcher("mqtt", algorithm, max_multi_wildcards=0)
    none.subscribe("a/+", 1)
    for refused in ("#", "a/#", "$share/g/#"):
        with pytest.raises(tm.LimitExceeded, match="max_multi_wildcards is 0, got 1"):
            none.subscribe(refused, 1)
    with pytest.raises(ValueError, match="max_multi_wildcards must be a non-negative integer"):
        tm.Matcher("amqp", algorithm, max_multi_wildcards=-1)
    with pytest.raises(TypeError, match="max_multi_wildcards must be int or None"):
        tm.Matcher("amqp", algorithm, max_multi_wildcards=2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_wrong_types_are_type_errors_and_change_nothing(algorithm: str) -> None:
    m = tm.Matcher("amqp", algorithm)
    m.subscribe("a.*", "x")
    before = state(m)
    for call in (
        lambda: m.subscribe(b"a", 1),  # type: ignore[arg-type]
        lambda: m.subscribe("a", 1.5),  # type: ignore[arg-type]
        lambda: m.subscribe("a", True),
        lambda: m.unsubscribe("1"),  # type: ignore[arg-type]
        lambda: m.unsubscribe(True),
        lambda: m.lookup(None),  # type: ignore[arg-type]
        lambda: m.lookup_many("a.b"),
        lambda: m.lookup_many(["a.b", 3]),  # type: ignore[list-item]
        lambda: m.matches_any(object()),  # type: ignore[arg-type]
        lambda: tm.Matcher("amqp", algorithm, max_levels=2.0),  # type: ignore[arg-type]
    ):
        with pytest.raises(TypeError):
            call()
    assert state(m) == before
    assert m.unsubscribe(-1) is False
    assert m.unsubscribe(2**70) is False
    for bad in (0, -1, 2**64):
        with pytest.raises(ValueError, match="max_levels must be a positive integer"):
            tm.Matcher("amqp", algorithm, max_levels=bad)


@pytest.mark.parametrize("release_gil", [True, False])
def test_a_panic_becomes_topicmatcherror(release_gil: bool) -> None:
    m = tm.Matcher("amqp")
    m.subscribe("a.#", 1)
    with pytest.raises(tm.TopicMatchError, match="deliberate panic") as caught:
        _native._panic_for_tests(release_gil)
    assert not isinstance(caught.value, ValueError)
    assert m.lookup("a.b") == [1]


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_a_corrupt_snapshot_is_refused(algorithm: str) -> None:
    limits = (255, 4096, 2**64 - 1)
    good = [(1, "a.b", 1), (2, "a.*", "x")]
    restored = _native._restore_matcher("amqp", algorithm, limits, good, 3)
    assert restored.subscriptions() == good
    for subs, next_id in (
        ([(1, "a.b", 1), (1, "a.c", 1)], 3),
        ([(1, "a.b", 1), (2, "a.b", 1)], 3),
        ([(1, "a" * 256, 1)], 2),
        ([(2**64 - 1, "a", 1)], 1),
        ([(1, "a\ud800", 1)], 2),
    ):
        with pytest.raises(ValueError):
            _native._restore_matcher("amqp", algorithm, limits, subs, next_id)
    last = _native._restore_matcher("amqp", algorithm, limits, good, 2**64 - 1)
    with pytest.raises(ValueError, match="exhausted"):
        last.subscribe("c", 1)
    assert last.subscriptions() == good
