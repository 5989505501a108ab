"""Every line of the public API, its errors and its limits."""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable

import pytest

import topicmatch as tm


def test_algorithms_and_dialects() -> None:
    assert isinstance(tm.ALGORITHMS, tuple)
    assert {"naive", "trie"} <= set(tm.ALGORITHMS)
    assert tm.DIALECTS == ("amqp", "mqtt", "nats")
    assert set(tm.__all__) <= set(dir(tm))


def test_the_dialect_is_required() -> None:
    # MQTT wildcards under another dialect's rules give a wrong answer without an error: no
    # dialect is assumed anywhere.
    with pytest.raises(TypeError, match="dialect"):
        tm.Matcher()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="dialect"):
        tm.Matcher(algorithm="trie")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="dialect"):
        tm.matches("sensors/+/temp", "sensors/b1/temp")  # type: ignore[call-arg]
    assert tm.matches("sensors/+/temp", "sensors/b1/temp", dialect="mqtt")


def test_default_is_the_lock_free_trie() -> None:
    # The Python matcher is shared by threads (lookups release the GIL): cstrie is its default.
    m = tm.Matcher("amqp")
    assert (m.dialect, m.algorithm) == ("amqp", "cstrie")
    m.subscribe("a.*", "x")
    assert pickle.loads(pickle.dumps(m)).algorithm == "cstrie"


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_readme_walkthrough(algorithm: str) -> None:
    m = tm.Matcher(dialect="amqp", algorithm=algorithm, max_topic_bytes=None, max_levels=None,
                   max_subscriptions=None)
    sid = m.subscribe("stock.*.ibm", "alice")
    assert isinstance(sid, int)
    assert m.subscribe("stock.*.ibm", "alice") == sid
    m.subscribe("stock.#", "alice")
    m.subscribe("stock.nyse.*", 42)
    assert sorted(m.lookup("stock.nyse.ibm"), key=str) == [42, "alice"]
    assert m.lookup_many(["stock.nyse.ibm", "bond.x", "stock.lse.ibm"]) in (
        [["alice", 42], [], ["alice"]],
        [[42, "alice"], [], ["alice"]],
    )
    assert m.lookup_many(iter([])) == []
    assert m.matches_any("stock.nyse.ibm") is True
    assert m.matches_any("bond.x") is False
    assert len(m) == 3
    assert m.unsubscribe(sid) is True
    assert m.unsubscribe(sid) is False
    assert len(m) == 2
    assert tm.matches("a.#", "a", dialect="amqp") is True
    assert tm.matches("a/+", "a/b/c", dialect="mqtt") is False


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_pickle_keeps_subscriptions_ids_and_subscribers(algorithm: str) -> None:
    m = tm.Matcher(dialect="mqtt", algorithm=algorithm, max_levels=9, max_subscriptions=50,
                   max_multi_wildcards=1)
    ids = [m.subscribe(f"a/{i}/#", i if i % 2 else f"s{i}") for i in range(10)]
    m.unsubscribe(ids[4])
    back = pickle.loads(pickle.dumps(m))
    assert back.subscriptions() == m.subscriptions()
    assert back.algorithm == algorithm and back.dialect == "mqtt"
    assert back.limits == m.limits == {
        "max_topic_bytes": 65535, "max_levels": 9, "max_subscriptions": 50,
        "max_multi_wildcards": 1,
    }
    assert back.lookup("a/3/x") == [3]
    assert back.unsubscribe(ids[3]) is True
    assert back.subscribe("new", 1) > ids[-1]


def test_exception_hierarchy() -> None:
    for cls in (tm.InvalidPattern, tm.InvalidTopic, tm.InvalidSubscriber, tm.LimitExceeded):
        assert issubclass(cls, tm.TopicMatchError)
        assert issubclass(cls, ValueError)
    assert not issubclass(tm.TopicMatchError, ValueError)
    assert tm.InvalidPattern.__module__ == "topicmatch"


def test_error_messages_name_dialect_text_position_and_rule() -> None:
    m = tm.Matcher(dialect="mqtt")
    with pytest.raises(tm.InvalidPattern, match=r"mqtt.*'?\"?a/b#/c.*level 2: .*whole level"):
        m.subscribe("a/b#/c", "s")
    with pytest.raises(tm.InvalidTopic, match=r"nats.*token 2: "):
        tm.Matcher(dialect="nats").lookup("a.*")


def test_unknown_names_list_valid_ones() -> None:
    with pytest.raises(ValueError, match="amqp.*mqtt.*nats"):
        tm.Matcher(dialect="stomp")
    with pytest.raises(ValueError, match="naive.*trie"):
        tm.Matcher(dialect="amqp", algorithm="quantum")
    with pytest.raises(ValueError, match="round_robin"):
        tm.Matcher(dialect="amqp", group_policy="fair")  # type: ignore[arg-type]


@pytest.mark.parametrize(("call", "argument"), [
    (lambda: tm.Matcher(b"mqtt"), "dialect"),  # type: ignore[arg-type]
    (lambda: tm.Matcher("mqtt", 3), "algorithm"),  # type: ignore[arg-type]
    (lambda: tm.Matcher("mqtt", group_policy=1), "group_policy"),  # type: ignore[arg-type]
    (lambda: tm.matches("a", "a", dialect=b"mqtt"), "dialect"),  # type: ignore[arg-type]
    (lambda: tm.covers("a", "a", dialect=None), "dialect"),  # type: ignore[arg-type]
    (lambda: tm.intersects("a", "a", dialect=1.5), "dialect"),  # type: ignore[arg-type]
    (lambda: tm.TopicStore(b"nats"), "dialect"),  # type: ignore[arg-type]
])
def test_a_setting_of_the_wrong_type_names_its_argument(call: Callable[[], object],
                                                        argument: str) -> None:
    with pytest.raises(TypeError, match=f"^{argument} must be str, not "):
        call()


def test_limits() -> None:
    m = tm.Matcher(dialect="amqp", max_topic_bytes=8, max_levels=3, max_subscriptions=2)
    with pytest.raises(tm.LimitExceeded, match="max_topic_bytes is 8"):
        m.subscribe("aaaa.bbbb", "s")
    with pytest.raises(tm.LimitExceeded, match="max_levels is 3"):
        m.subscribe("a.b.c.d", "s")
    m.subscribe("a.#", "s")
    m.subscribe("*.b", "s")
    with pytest.raises(tm.LimitExceeded, match="max_subscriptions is 2"):
        m.subscribe("a.*", "s")
    assert len(m) == 2
    with pytest.raises(tm.LimitExceeded):
        m.lookup("a.b.c.d")
    assert m.lookup("a.b") == ["s"]
    assert tm.Matcher(dialect="amqp").limits["max_topic_bytes"] == 255
    assert tm.Matcher(dialect="nats").limits["max_topic_bytes"] == 65535
    with pytest.raises(ValueError):
        tm.Matcher(dialect="amqp", max_levels=0)


def test_bad_types_and_lone_surrogates() -> None:
    m = tm.Matcher(dialect="mqtt")
    with pytest.raises(TypeError):
        m.subscribe(b"a/b", "s")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.subscribe("a/b", 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.subscribe("a/b", True)
    with pytest.raises(tm.InvalidSubscriber, match="64 bits"):
        m.subscribe("a/b", 2**70)
    with pytest.raises(tm.InvalidSubscriber, match="64 bits"):
        m.subscribe("a/b", -(2**63) - 1)
    with pytest.raises(tm.InvalidPattern, match="surrogate"):
        m.subscribe("a/\ud800", "s")
    with pytest.raises(tm.InvalidTopic, match="surrogate"):
        m.lookup("a/\udfff")
    with pytest.raises(tm.InvalidSubscriber, match="surrogate"):
        m.subscribe("a/b", "\ud800")
    with pytest.raises(TypeError):
        m.lookup_many("a/b")
    with pytest.raises(TypeError):
        m.lookup_many([1])  # type: ignore[list-item]
    assert len(m) == 0


@pytest.mark.parametrize(
    ("dialect", "text", "shown", "where"),
    [
        ("mqtt", "a/b\udc80c", r"a/b\u{dc80}c", "level 2: {} 4 {} (U+DC80)"),
        ("amqp", "\ud800", r"\u{d800}", "word 1: {} 1 {} (U+D800)"),
        ("nats", 'x."y.\ud83d\ude00', r'x.\"y.\u{d83d}\u{de00}', "token 3: {} 6 {} (U+D83D)"),
    ],
)
def test_a_lone_surrogate_is_named_with_its_text_word_and_character(
    dialect: str, text: str, shown: str, where: str
) -> None:
    """The message names the dialect, the text (the surrogate escaped), the word and the
    character at fault, for patterns and topics, through every call that reads them."""
    m = tm.Matcher(dialect=dialect)
    where = where.format("not valid UTF-8: character", "is a lone surrogate")
    for kind, error, call in (
        ("pattern", tm.InvalidPattern, lambda: m.subscribe(text, "s")),
        ("pattern", tm.InvalidPattern, lambda: tm.covers(text, text, dialect=dialect)),
        ("topic", tm.InvalidTopic, lambda: m.lookup(text)),
        ("topic", tm.InvalidTopic, lambda: m.lookup_many(["ok", text])),
        ("topic", tm.InvalidTopic, lambda: tm.matches("x", text, dialect=dialect)),
    ):
        with pytest.raises(error) as caught:
            call()
        assert str(caught.value).startswith(f'invalid {dialect} {kind} "{shown}": {where}'), (
            str(caught.value)
        )
    assert m.subscriptions() == []


def test_a_long_text_with_a_lone_surrogate_is_shortened() -> None:
    with pytest.raises(tm.InvalidTopic) as caught:
        tm.Matcher("mqtt").lookup("a" * 100 + "\ud800")
    assert str(caught.value) == (
        f'invalid mqtt topic "{"a" * 60}... (101 characters)": level 1: not valid UTF-8: '
        "character 101 is a lone surrogate (U+D800)"
    )


def test_many_hashes_answer_at_once() -> None:
    m = tm.Matcher(dialect="amqp")
    m.subscribe(".".join(["#"] * 127), "deep")
    assert m.lookup(".".join(["a"] * 127)) == ["deep"]


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_threads_share_one_matcher(algorithm: str) -> None:
    m = tm.Matcher(dialect="amqp", algorithm=algorithm)
    for i in range(50):
        m.subscribe(f"t.{i}.*", i)
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(200):
                got = m.lookup_many([f"t.{i}.x" for i in range(50)])
                assert [g[:1] for g in got] == [[i] for i in range(50)]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer() -> None:
        for i in range(1000, 1500):
            sid = m.subscribe(f"w.{i}", i)
            assert m.unsubscribe(sid)

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(m) == 50
