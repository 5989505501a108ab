"""Hypothesis: FieldMatcher and Matcher(where=...) against a direct evaluator written here."""

from __future__ import annotations

from typing import Any, Literal

from hypothesis import example, given
from hypothesis import strategies as st

import topicmatch as tm

FIELDS = ["a", "b", "c", "d"]
OPS = {"lt": tm.lt, "le": tm.le, "gt": tm.gt, "ge": tm.ge}

# Small numbers meet each other often; the edges of the integer range (-2**63 to 2**64 - 1)
# and the floats beside them check that comparisons there are exact.
EDGES = [-(2**63), 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, -(2.0**63), 2.0**63, 2.0**64, 1.5e19]
numbers = (st.integers(-2, 2) | st.integers(-4, 5).map(lambda h: h / 2)
           | st.sampled_from(EDGES))
values = st.sampled_from(["x", "y", ""]) | numbers | st.booleans()
criterion = st.one_of(
    st.just(("present", None)),
    values.map(lambda v: ("eq", v)),
    st.lists(values, min_size=1, max_size=3).map(lambda vs: ("in", tuple(vs))),
    st.tuples(st.sampled_from(sorted(OPS)), numbers),
)
criteria = st.dictionaries(st.sampled_from(FIELDS), criterion, min_size=1, max_size=4)
modes = st.sampled_from(["all", "any"]) | st.integers(1, 4)
messages = st.dictionaries(st.sampled_from(FIELDS), values | st.none(), max_size=4)


def is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b and (is_number(a) == is_number(b))


def met(c: tuple[str, Any], message: dict[str, Any], field: str) -> bool:
    if field not in message:
        return False
    kind, arg = c
    x = message[field]
    if kind == "present":
        return True
    if kind == "eq":
        return same(x, arg)
    if kind == "in":
        return any(same(x, v) for v in arg)
    if not is_number(x):
        return False
    return {"lt": x < arg, "le": x <= arg, "gt": x > arg, "ge": x >= arg}[kind]


def to_py(c: tuple[str, Any]) -> Any:
    kind, arg = c
    if kind == "present":
        return tm.PRESENT
    if kind in ("eq", "in"):
        return arg
    return OPS[kind](arg)


def threshold(crit: dict[str, Any], mode: str | int) -> int:
    return {"all": len(crit), "any": 1}.get(mode, mode)  # type: ignore[arg-type]


def hits(crit: dict[str, Any], message: dict[str, Any]) -> int:
    return sum(met(c, message, f) for f, c in crit.items())


@given(
    subs=st.lists(
        st.tuples(criteria, modes, st.integers(0, 3) | st.sampled_from(["s", "t"]),
                  st.booleans()),
        max_size=12,
    ),
    msgs=st.lists(messages, min_size=1, max_size=6),
)
# The same subscription twice, one of the two dropped: both go.
@example(subs=[({"a": ("present", None)}, "all", 0, False),
               ({"a": ("present", None)}, "all", 0, True)],
         msgs=[{"a": None}])
# Past the signed range, by an integer and by the float beside it.
@example(subs=[({"a": ("gt", 2**63 - 1), "b": ("eq", 2**64 - 1)}, "any", 0, False),
               ({"a": ("lt", 2.0**64)}, "all", 1, False)],
         msgs=[{"a": 2**63, "b": 2**64 - 1}, {"a": 2.0**63}, {"b": 2.0**64}])
def test_field_matcher_agrees_with_direct_evaluation(
    subs: list[tuple[dict[str, Any], Literal["all", "any"] | int, int | str, bool]],
    msgs: list[dict[str, Any]],
) -> None:
    fm = tm.FieldMatcher()
    subscribed = []
    dropped = set()
    for crit, mode, sub, drop in subs:
        n = threshold(crit, mode)
        if 1 <= n <= len(crit):
            sid = fm.subscribe({f: to_py(c) for f, c in crit.items()}, sub, mode=mode)
            subscribed.append((sid, crit, n, sub))
            if drop:
                dropped.add(sid)
        else:
            try:
                fm.subscribe({f: to_py(c) for f, c in crit.items()}, sub, mode=mode)
            except tm.InvalidPattern:
                pass
            else:
                raise AssertionError(f"accepted k={mode} of {len(crit)}")
    # Dropped after every subscribe: a subscriber can leave while its value is still held
    # under other criteria (then it stays), or leave altogether.
    # The same criteria, mode and subscriber again are the same subscription, dropped as one.
    for sid in dropped:
        assert fm.unsubscribe(sid)
    held = [(crit, n, sub) for sid, crit, n, sub in subscribed if sid not in dropped]
    for message in msgs:
        want = {sub for crit, n, sub in held if hits(crit, message) >= n}
        want_hits: dict[int | str, int] = {}
        for crit, _, sub in held:
            h = hits(crit, message)
            if h:
                want_hits[sub] = max(want_hits.get(sub, 0), h)
        got = fm.lookup(message)
        assert len(got) == len(set(got))
        assert set(got) == want, message
        assert fm.hits(message) == want_hits, message
    assert fm.lookup_many(msgs) == [fm.lookup(m) for m in msgs]


PATTERNS = ["a.*", "#", "a.b", "b", "*"]
TOPICS = ["a.b", "a.c", "b", "a"]


@given(
    subs=st.lists(
        st.tuples(st.sampled_from(PATTERNS), st.none() | criteria, st.integers(0, 3)),
        max_size=10,
    ),
    lookups=st.lists(st.tuples(st.sampled_from(TOPICS), messages), min_size=1, max_size=5),
    algorithm=st.sampled_from(tm.ALGORITHMS),
)
def test_where_agrees_with_pattern_and_criteria(
    subs: list[tuple[str, dict[str, Any] | None, int]],
    lookups: list[tuple[str, dict[str, Any]]],
    algorithm: str,
) -> None:
    m = tm.Matcher("amqp", algorithm)
    for pattern, crit, sub in subs:
        where = None if crit is None else {f: to_py(c) for f, c in crit.items()}
        m.subscribe(pattern, sub, where=where)
    for topic, message in lookups:
        want = {
            sub
            for pattern, crit, sub in subs
            if tm.matches(pattern, topic, "amqp") and (crit is None or hits(crit, message) == len(crit))
        }
        got = m.lookup(topic, fields=message)
        assert len(got) == len(set(got)) and set(got) == want, (topic, message)
