"""Pattern relations: ``covers`` and ``intersects`` against their definitions (every topic up
to a length that provably suffices, over an alphabet that provably suffices), the peers'
vectors of ``tests/cases/relations.json``, and ``Matcher.covering`` / ``Matcher.intersecting``
on every algorithm against a scan that asks ``covers`` / ``intersects`` of each subscription.

The oracle's bounds are argued in ``crates/topicmatch-core/tests/relations/oracle.rs``:
- alphabet: the literal words of both patterns, one fresh word, and for MQTT a fresh ``$`` word
  and the empty word (any other word is matched like one of these by both patterns);
- ``intersects(a, b)``: topics of up to max(n(a) + n(b), 2) words;
- ``covers(g, s)``: topics of up to n(s) + runs(s) * (k(g) + 1) words;
where n counts the words that are not ``#`` (NATS ``>`` counts one), runs the runs of ``#``
and k the one-word wildcards (NATS ``>`` counts one).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import topicmatch as tm

CASES = json.loads((Path(__file__).parent / "cases" / "relations.json").read_text("utf-8"))
SEP = {"amqp": ".", "mqtt": "/", "nats": "."}
ONE = {"amqp": "*", "mqtt": "+", "nats": "*"}
MULTI = {"amqp": "#", "mqtt": "#", "nats": ">"}
LITERALS = {"amqp": ["a", "b", ""], "mqtt": ["a", "b", "", "$s"], "nats": ["a", "b", "$s"]}
MAX_TOPICS = 5_000


def words(dialect: str, pattern: str) -> list[str]:
    return pattern.split(SEP[dialect]) if pattern else []


def fixed(dialect: str, pattern: str) -> int:
    return sum(1 for w in words(dialect, pattern) if w != MULTI[dialect] or dialect == "nats")


def runs(dialect: str, pattern: str) -> int:
    w = words(dialect, pattern)
    return sum(1 for i, x in enumerate(w) if x == MULTI[dialect] and (i == 0 or w[i - 1] != x))


def ones(dialect: str, pattern: str) -> int:
    multi = MULTI[dialect] if dialect == "nats" else None
    return sum(1 for w in words(dialect, pattern) if w in (ONE[dialect], multi))


def alphabet(dialect: str, a: str, b: str) -> list[str]:
    wild = {ONE[dialect], MULTI[dialect]}
    found = {w for w in words(dialect, a) + words(dialect, b) if w not in wild}
    fresh = "f"
    while fresh in found or "$" + fresh in found:
        fresh += "f"
    found.add(fresh)
    if dialect == "mqtt":
        found |= {"$" + fresh, ""}
    return sorted(found)


def valid_topic(dialect: str, text: str) -> bool:
    if dialect == "amqp":
        return True
    if dialect == "mqtt":
        return text != ""
    return text != "" and "" not in text.split(".")


def topics(dialect: str, a: str, b: str, length: int) -> list[str]:
    alpha = alphabet(dialect, a, b)
    out = []
    for k in range(length + 1):
        for combo in itertools.product(alpha, repeat=k):
            text = SEP[dialect].join(combo)
            if valid_topic(dialect, text):
                out.append(text)
    return out


def affordable(dialect: str, a: str, b: str, length: int) -> bool:
    size = len(alphabet(dialect, a, b))
    return sum(size**k for k in range(length + 1)) <= MAX_TOPICS


def brute(dialect: str, a: str, b: str, length: int) -> list[set[Any]]:
    """For each topic up to ``length`` words: which of ``a`` ("A") and ``b`` ("B") match it."""
    m = tm.Matcher(dialect, "naive")
    m.subscribe(a, "A")
    m.subscribe(b, "B")
    return [set(r) for r in m.lookup_many(topics(dialect, a, b, length))]


def covers_bound(dialect: str, general: str, specific: str) -> int:
    return fixed(dialect, specific) + runs(dialect, specific) * (ones(dialect, general) + 1)


def intersects_bound(dialect: str, a: str, b: str) -> int:
    return max(fixed(dialect, a) + fixed(dialect, b), 2)


def oracle_covers(dialect: str, general: str, specific: str) -> bool:
    rows = brute(dialect, general, specific, covers_bound(dialect, general, specific))
    return all("A" in r for r in rows if "B" in r)


def oracle_intersects(dialect: str, a: str, b: str) -> bool:
    return any(r >= {"A", "B"} for r in brute(dialect, a, b, intersects_bound(dialect, a, b)))


@st.composite
def pattern(draw: st.DrawFn, dialect: str) -> str:
    pool = LITERALS[dialect] + [ONE[dialect]] + ([MULTI[dialect]] if dialect == "amqp" else [])
    body = draw(st.lists(st.sampled_from(pool), max_size=3))
    if draw(st.booleans()):
        body.append(MULTI[dialect])
    text = SEP[dialect].join(body)
    assume(text != "" or dialect == "amqp")
    return text


@st.composite
def dialect_pair(draw: st.DrawFn) -> tuple[str, str, str]:
    dialect = draw(st.sampled_from(tm.DIALECTS))
    return dialect, draw(pattern(dialect)), draw(pattern(dialect))


@given(dialect_pair())
def test_covers_matches_its_definition(case: tuple[str, str, str]) -> None:
    dialect, a, b = case
    for g, s in ((a, b), (b, a)):
        assume(affordable(dialect, g, s, covers_bound(dialect, g, s)))
        assert tm.covers(g, s, dialect=dialect) == oracle_covers(dialect, g, s), (dialect, g, s)


@given(dialect_pair())
def test_intersects_matches_its_definition(case: tuple[str, str, str]) -> None:
    dialect, a, b = case
    assume(affordable(dialect, a, b, intersects_bound(dialect, a, b)))
    want = oracle_intersects(dialect, a, b)
    assert tm.intersects(a, b, dialect=dialect) == want, (dialect, a, b)
    assert tm.intersects(b, a, dialect=dialect) == want, (dialect, b, a)


def suite_rows(kind: str) -> list[Any]:
    return [
        pytest.param(s["dialect"], *row, id=f"{s['dialect']}-{row[0]!r}-{row[1]!r}")
        for s in CASES["suites"]
        for row in s[kind]
    ]


@pytest.mark.parametrize(("dialect", "general", "specific", "want"), suite_rows("covers"))
def test_peer_covers_vectors(dialect: str, general: str, specific: str, want: bool) -> None:
    assert tm.covers(general, specific, dialect=dialect) is want


@pytest.mark.parametrize(("dialect", "a", "b", "want"), suite_rows("intersects"))
def test_peer_intersects_vectors(dialect: str, a: str, b: str, want: bool) -> None:
    assert tm.intersects(a, b, dialect=dialect) is want


@pytest.mark.parametrize(("dialect", "a", "b"), suite_rows("invalid"))
def test_invalid_patterns_raise(dialect: str, a: str, b: str) -> None:
    with pytest.raises(tm.InvalidPattern):
        tm.covers(a, b, dialect=dialect)
    with pytest.raises(tm.InvalidPattern):
        tm.intersects(a, b, dialect=dialect)


def test_the_vector_table_is_not_empty() -> None:
    assert len(suite_rows("covers")) > 100
    assert len(suite_rows("intersects")) > 50


def test_dialect_is_required_and_checked() -> None:
    with pytest.raises(TypeError):
        tm.covers("a", "a")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        tm.intersects("a", "a")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown dialect"):
        tm.covers("a", "a", dialect="kafka")
    with pytest.raises(TypeError):
        tm.covers(b"a", "a", dialect="amqp")  # type: ignore[arg-type]


def test_a_costly_pair_raises_limit_exceeded() -> None:
    general = "#.a" + ".*" * 12 + ".b.#"
    specific = ".#.".join(["a"] * 14) + ".#.b"
    with pytest.raises(tm.LimitExceeded, match="max_work"):
        tm.covers(general, specific, dialect="amqp", max_work=1000)
    with pytest.raises(ValueError):
        tm.covers(general, specific, dialect="amqp", max_work=0)
    assert tm.covers(specific, specific, dialect="amqp", max_work=1000)


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_covering_decides_each_pattern_within_its_max_work(algorithm: str) -> None:
    # A pair that covers, whose decision takes a little more than the default bound.
    general = ("#.a" + ".*" * 11 + ".") * 3 + "#"
    specific = ".".join(["#", "a"] * 60 + ["#"])[:255].rstrip(".")
    m = tm.Matcher("amqp", algorithm)
    costly = m.subscribe(general, "g")
    everything = m.subscribe("#", "all")
    with pytest.raises(tm.LimitExceeded, match="max_work"):
        m.covering(specific)
    with pytest.raises(tm.LimitExceeded, match="max_work is 1000,"):
        m.covering(specific, max_work=1000)
    assert tm.covers(general, specific, dialect="amqp", max_work=1 << 26)
    assert m.covering(specific, max_work=1 << 26) == [(costly, general, "g"),
                                                       (everything, "#", "all")]
    with pytest.raises(ValueError):
        m.covering(specific, max_work=0)
    with pytest.raises(TypeError):
        m.covering(specific, max_work="many")  # type: ignore[arg-type]
    assert len(m) == 2


def test_an_acl_check_with_covers() -> None:
    acl = ["sensors/+/temp", "$SYS/#", "clients/alice/#"]
    assert any(tm.covers(f, "clients/alice/inbox/+", dialect="mqtt") for f in acl)
    assert not any(tm.covers(f, "sensors/#", dialect="mqtt") for f in acl)


# Matcher.covering / Matcher.intersecting on every algorithm, against a scan.

SUBSCRIBERS = st.sampled_from([1, 2, "s"])


@st.composite
def matcher_case(draw: st.DrawFn) -> tuple[str, list[tuple[str, Any]], list[str]]:
    dialect = draw(st.sampled_from(tm.DIALECTS))
    texts = st.one_of(pattern(dialect), pattern(dialect).map(lambda p: f"$share/g/{p}"))
    texts = texts if dialect == "mqtt" else pattern(dialect)
    subs = draw(st.lists(st.tuples(texts, SUBSCRIBERS), max_size=12))
    queries = draw(st.lists(pattern(dialect), min_size=1, max_size=4))
    return dialect, subs, queries


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
@given(case=matcher_case())
def test_matcher_walks_agree_with_a_scan(
    algorithm: str, case: tuple[str, list[tuple[str, Any]], list[str]]
) -> None:
    dialect, subs, queries = case
    m = tm.Matcher(dialect, algorithm)
    for text, subscriber in subs:
        m.subscribe(text, subscriber)
    held = m.subscriptions()
    for q in queries:
        want = [s for s in held if tm.covers(s[1], q, dialect=dialect)]
        assert m.covering(q) == want, (algorithm, q)
        want = [s for s in held if tm.intersects(s[1], q, dialect=dialect)]
        assert m.intersecting(q) == want, (algorithm, q)


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_matcher_relations_name_each_subscription_once(algorithm: str) -> None:
    m = tm.Matcher("mqtt", algorithm)
    admin = m.subscribe("#", "admin")
    alice = m.subscribe("sensors/+/temp", "alice")
    bob = m.subscribe("sensors/kitchen/#", "bob")
    shared = m.subscribe("$share/g/sensors/kitchen/#", "bob")
    filtered = m.subscribe("sensors/kitchen/#", "carol", where={"x": tm.PRESENT})
    m.subscribe("$SYS/#", "monitor")
    got = m.covering("sensors/kitchen/temp")
    assert [s[0] for s in got] == [admin, alice, bob, shared, filtered]
    assert got[3] == (shared, "$share/g/sensors/kitchen/#", "bob")
    assert [s[0] for s in m.intersecting("sensors/+/#")] == [admin, alice, bob, shared, filtered]
    assert m.covering("other/x") == [(admin, "#", "admin")]
    with pytest.raises(tm.InvalidPattern):
        m.covering("sensors/#/x")
    with pytest.raises(TypeError):
        m.intersecting(3)  # type: ignore[arg-type]
