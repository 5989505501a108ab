"""The matching contract read directly: a reference matcher for each dialect, written here from
the contract's rules alone (no code shared with the package), against `tm.matches` and against
every algorithm's `lookup`, on texts made of the words where the dialects differ."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

import topicmatch as tm

SEP = {"amqp": ".", "mqtt": "/", "nats": "."}

#: Words where the rules differ: empty words, each dialect's wildcards alone and inside a
#: word, `$` words, whitespace and NUL (invalid in MQTT and NATS).
WORDS = ["a", "b", "", "*", "#", "+", ">", "a#", "+a", "*b", ">>", "$s", "$SYS", " ", "a\tb",
         "\x00"]


def amqp_words(text: str) -> list[str]:
    """AMQP splits on every `.`; the empty routing key has no words."""
    return [] if text == "" else text.split(".")


def amqp(pattern: str, topic: str) -> bool:
    p, t = amqp_words(pattern), amqp_words(topic)

    @cache
    def at(i: int, j: int) -> bool:
        if i == len(p):
            return j == len(t)
        if p[i] == "#":
            # Zero words, or one more.
            return at(i + 1, j) or (j < len(t) and at(i, j + 1))
        return j < len(t) and p[i] in ("*", t[j]) and at(i + 1, j + 1)

    return at(0, 0)


def mqtt_filter_error(text: str) -> bool:
    levels = text.split("/")
    return (text == "" or "\x00" in text
            or any(("+" in level or "#" in level) and level not in ("+", "#")
                   for level in levels)
            or "#" in levels[:-1])


def mqtt_topic_error(text: str) -> bool:
    return text == "" or "+" in text or "#" in text or "\x00" in text


def mqtt(pattern: str, topic: str) -> bool:
    f, t = pattern.split("/"), topic.split("/")
    if t[0].startswith("$") and f[0] in ("+", "#"):
        return False
    for i, level in enumerate(f):
        if level == "#":
            # The parent level and any number of children.
            return True
        if i == len(t) or level not in ("+", t[i]):
            return False
    return len(f) == len(t)


#: Whitespace nats-server refuses in a subject (its byte checks), and NUL.
NATS_BAD = (" ", "\t", "\n", "\r", "\f", "\x00")


def nats_subject_error(text: str, wildcards_allowed: bool) -> bool:
    tokens = text.split(".")
    if text == "" or "" in tokens or any(c in text for c in NATS_BAD):
        return True
    if wildcards_allowed:
        return ">" in tokens[:-1]
    return "*" in tokens or ">" in tokens


def nats(pattern: str, topic: str) -> bool:
    p, t = pattern.split("."), topic.split(".")
    for i, token in enumerate(p):
        if token == ">":
            # One or more tokens (`>` is last).
            return len(t) > i
        if i == len(t) or token not in ("*", t[i]):
            return False
    return len(p) == len(t)


def reference(dialect: str, pattern: str, topic: str) -> bool | str:
    """Whether `pattern` matches `topic` in `dialect`, or which of the two is invalid (the
    pattern named first)."""
    if dialect == "amqp":
        return amqp(pattern, topic)
    if dialect == "mqtt":
        if mqtt_filter_error(pattern):
            return "pattern"
        return "topic" if mqtt_topic_error(topic) else mqtt(pattern, topic)
    if nats_subject_error(pattern, wildcards_allowed=True):
        return "pattern"
    return "topic" if nats_subject_error(topic, wildcards_allowed=False) else nats(pattern, topic)


def texts(dialect: str) -> st.SearchStrategy[str]:
    words = [w for w in WORDS if dialect != "amqp" or w != "\x00"]
    return st.lists(st.sampled_from(words), max_size=5).map(SEP[dialect].join)


def outcome(dialect: str, pattern: str, topic: str) -> bool | str:
    try:
        return tm.matches(pattern, topic, dialect=dialect)
    except tm.InvalidPattern:
        return "pattern"
    except tm.InvalidTopic:
        return "topic"


@given(data=st.data(), dialect=st.sampled_from(tm.DIALECTS))
def test_matches_follows_the_contract(data: st.DataObject, dialect: str) -> None:
    pattern, topic = data.draw(texts(dialect)), data.draw(texts(dialect))
    want = reference(dialect, pattern, topic)
    assert outcome(dialect, pattern, topic) == want, (dialect, pattern, topic)
    if want in (True, False):
        for algorithm in tm.ALGORITHMS:
            m = tm.Matcher(dialect, algorithm)
            m.subscribe(pattern, "s")
            assert m.lookup(topic) == (["s"] if want else []), (algorithm, pattern, topic)


@pytest.mark.parametrize(("dialect", "pattern", "topic", "want"), [
    ("amqp", "a.#.b", "a.b", True), ("amqp", "#.c", "c", True), ("amqp", "*", "", False),
    ("amqp", "", "", True), ("amqp", "#", "", True), ("amqp", "a.*", "a.", True),
    ("mqtt", "a/#", "a", True), ("mqtt", "+/+", "/", True), ("mqtt", "#", "$SYS/x", False),
    ("mqtt", "$SYS/#", "$SYS/x", True), ("mqtt", "a/+", "a/", True),
    ("nats", "foo.>", "foo", False), ("nats", "foo.>", "foo.bar.baz", True),
    ("nats", "foo*.>>", "foo*.>>", True),
])
def test_the_reference_reads_the_contracts_examples(dialect: str, pattern: str, topic: str,
                                                     want: bool) -> None:
    """The reference itself, on the contract's own examples."""
    assert reference(dialect, pattern, topic) is want
