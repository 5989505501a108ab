"""Shared subscriptions and queue groups through the Python API: one member of each matching
group per message, in `lookup`, `lookup_many` and `lookup_arrow` alike; `lookup_groups` for a
broker's own policy; groups survive pickling; every algorithm agrees with `naive`; and groups
beside plain and `where=` subscriptions, changing between lookups, against a model."""

from __future__ import annotations

import collections
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topicmatch as tm
from conftest import run_together


def arrow_rows(m: tm.Matcher, topics: list[str]) -> list[list[object]]:
    table = m.subscriber_table()
    return [[table[i] for i in row] for row in pa.array(m.lookup_arrow(pa.array(topics))).to_pylist()]


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
@pytest.mark.parametrize(("dialect", "pattern", "topic"), [
    ("amqp", "jobs.*", "jobs.a"), ("mqtt", "jobs/+", "jobs/a"), ("nats", "jobs.>", "jobs.a.b"),
])
def test_one_member_per_group_in_every_api(algorithm: str, dialect: str, pattern: str,
                                           topic: str) -> None:
    m = tm.Matcher(dialect, algorithm)
    for w in ("w1", "w2", "w3"):
        m.subscribe(pattern, w, group="workers")
    m.subscribe(pattern, "plain")
    seen: collections.Counter[object] = collections.Counter()
    for _ in range(30):
        got = m.lookup(topic)
        assert len(got) == 2 and "plain" in got
        seen.update(got)
    assert seen == {"plain": 30, "w1": 10, "w2": 10, "w3": 10}  # round robin by default
    for row in m.lookup_many([topic] * 9) + arrow_rows(m, [topic] * 9):
        assert len(row) == 2 and "plain" in row and len(set(row)) == 2
    plain, groups = m.lookup_groups(topic)
    assert plain == ["plain"]
    assert {k: sorted(v) for k, v in groups.items()} == {
        ("workers", pattern): ["w1", "w2", "w3"]}


@pytest.mark.parametrize("algorithm", tm.ALGORITHMS)
def test_a_nats_queue_is_its_name_whatever_its_subjects(algorithm: str) -> None:
    """nats-server gathers a message's queue subscriptions by queue name (``sublist.go``): one
    member of ``workers`` gets it, whichever of its subjects matched; MQTT's share groups of
    one name and two filters are two groups (MQTT 5.0 4.8.2)."""
    m = tm.Matcher("nats", algorithm)
    m.subscribe("foo.*", "A", group="workers")
    m.subscribe("foo.bar", "B", group="workers")
    seen: collections.Counter[object] = collections.Counter()
    for _ in range(10):
        got = m.lookup("foo.bar")
        assert len(got) == 1
        seen.update(got)
    assert seen == {"A": 5, "B": 5}  # one turn for the queue
    for row in m.lookup_many(["foo.bar"] * 4) + arrow_rows(m, ["foo.bar"] * 4):
        assert len(row) == 1 and row[0] in ("A", "B")
    assert m.lookup("foo.x") == ["A"]
    plain, groups = m.lookup_groups("foo.bar")
    assert plain == [] and groups == {("workers", "foo.*"): ["A"], ("workers", "foo.bar"): ["B"]}
    mqtt = tm.Matcher("mqtt", algorithm)
    mqtt.subscribe("$share/workers/foo/+", "A")
    mqtt.subscribe("$share/workers/foo/bar", "B")
    assert sorted(mqtt.lookup("foo/bar")) == ["A", "B"]


def test_mqtt_share_texts_and_the_switch_that_keeps_them_plain() -> None:
    on = tm.Matcher("mqtt")
    off = tm.Matcher("mqtt", shared_subscriptions=False)
    assert on.shared_subscriptions and not off.shared_subscriptions
    for m in (on, off):
        m.subscribe("$share/g/a/+", "x")
        m.subscribe("$share/g/a/+", "y")
    assert len(on.lookup("a/b")) == 1
    assert sorted(off.lookup("a/b")) == ["x", "y"]
    assert on.groups() == [(1, "g"), (2, "g")] and off.groups() == []
    with pytest.raises(ValueError, match="mqtt"):
        tm.Matcher("amqp", shared_subscriptions=True)
    with pytest.raises(tm.InvalidPattern, match="share name"):
        on.subscribe("$share/g/a/+", "z", group="other")
    # The fault is named at the level where the filter is missing.
    with pytest.raises(tm.InvalidPattern, match=r'"\$share/g": level 2: .* needs a non-empty'):
        on.subscribe("$share/g", "z")
    with pytest.raises(tm.InvalidPattern, match=r'"\$share/g/": level 3: .* needs a non-empty'):
        on.subscribe("$share/g/", "z")


def test_policies() -> None:
    hashed = tm.Matcher("mqtt", group_policy="hash")
    rand = tm.Matcher("mqtt", group_policy="random")
    assert (hashed.group_policy, rand.group_policy) == ("hash", "random")
    for m in (hashed, rand):
        for i in range(4):
            m.subscribe("$share/g/t/#", i)
    # hash: one topic, one member; topics spread over all members.
    firsts = {}
    for t in range(40):
        topic = f"t/{t}"
        firsts[topic] = hashed.lookup(topic)
        assert all(hashed.lookup(topic) == firsts[topic] for _ in range(3))
    assert {tuple(v) for v in firsts.values()} == {(0,), (1,), (2,), (3,)}
    assert hashed.lookup_many(list(firsts)) == list(firsts.values())
    assert arrow_rows(hashed, list(firsts)) == list(firsts.values())
    assert {rand.lookup("t/x")[0] for _ in range(200)} == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="group_policy"):
        tm.Matcher("mqtt", group_policy="fastest")  # type: ignore[arg-type]


# A group name comes from clients, as a pattern does: `InvalidPattern`; a wrong type is a
# `TypeError`, and criteria on a group subscription the caller's own `ValueError`.
BAD_GROUPS: list[tuple[str, str, object, dict[str, object], type[Exception], str]] = [
    ("nats", "a.b", "", {}, tm.InvalidPattern, "invalid nats group name"),
    ("nats", "a.b", "a b", {}, tm.InvalidPattern, "whitespace"),
    ("nats", "a.b", "\ud800", {}, tm.InvalidPattern, "lone surrogate"),
    ("nats", "a.b", 3, {}, TypeError, "group must be str"),
    ("nats", "a.b", "q", {"where": {"k": 1}}, ValueError, "where"),
    ("mqtt", "a/+", "g\0", {}, tm.InvalidPattern, "U\\+0000"),
    ("mqtt", "$share/g/a", "h", {}, tm.InvalidPattern, "differs from the share name"),
    ("mqtt", "$share/g\0/a", None, {}, tm.InvalidPattern, "share name .* U\\+0000"),
]


@pytest.mark.parametrize(("dialect", "pattern", "group", "extra", "error", "match"), BAD_GROUPS)
def test_bad_groups_raise_and_change_nothing(dialect: str, pattern: str, group: object,
                                             extra: dict[str, object], error: type[Exception],
                                             match: str) -> None:
    m = tm.Matcher(dialect)
    with pytest.raises(error, match=match):
        m.subscribe(pattern, "x", group=group, **extra)  # type: ignore[arg-type]
    assert len(m) == 0 and m.groups() == []


def test_the_last_member_removes_the_group_and_pickling_keeps_them() -> None:
    m = tm.Matcher("amqp", "trie", group_policy="hash")
    a = m.subscribe("a.*", "x", group="g")
    assert m.subscribe("a.*", "x", group="g") == a
    b = m.subscribe("a.*", "y", group="g")
    m.subscribe("a.#", "z")
    copy = pickle.loads(pickle.dumps(m))
    assert (copy.group_policy, copy.groups(), copy.subscriptions()) == (
        "hash", m.groups(), m.subscriptions())
    for t in ("a.b", "a.c", "a"):
        assert copy.lookup(t) == m.lookup(t)
    assert m.unsubscribe(a) and m.unsubscribe(b)
    assert m.lookup_groups("a.b") == (["z"], {})
    assert m.groups() == []


@pytest.mark.parametrize(("dialect", "pattern", "topic"), [
    ("amqp", "a.*", "a.b"), ("mqtt", "a/+", "a/b"), ("nats", "a.*", "a.b"),
])
def test_a_group_that_takes_a_gone_groups_place_gets_its_own_key(dialect: str, pattern: str,
                                                                  topic: str) -> None:
    # Each group's (name, pattern) tuple is made once and handed to later results: a group
    # formed after another left, in its place, must not be handed the tuple of the first.
    m = tm.Matcher(dialect)
    first = m.subscribe(pattern, "x", group="first")
    assert m.lookup_groups(topic) == ([], {("first", pattern): ["x"]})
    key = next(iter(m.lookup_groups(topic)[1]))
    assert m.unsubscribe(first)
    wide = "#" if dialect != "nats" else ">"
    m.subscribe(pattern, "y", group="second")
    m.subscribe(wide, "z", group="first")
    assert m.lookup_groups(topic) == ([], {("second", pattern): ["y"], ("first", wide): ["z"]})
    assert key == ("first", pattern)


@pytest.mark.parametrize("algorithm", ["cstrie", "trie"])
def test_covering_finds_group_subscriptions(algorithm: str) -> None:
    m = tm.Matcher("mqtt", algorithm)
    m.subscribe("a/#", "x", group="g")
    m.subscribe("$share/h/a/+", "y")
    assert [(i, p) for i, p, _ in m.covering("a/b")] == [(1, "a/#"), (2, "$share/h/a/+")]


WORDS = ["a", "b", "", "+", "#"]


@given(subs=st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
                               st.integers(0, 3), st.sampled_from([None, "g", "h"])),
                     max_size=10),
       topics=st.lists(st.lists(st.sampled_from(["a", "b", ""]), max_size=3), max_size=6))
def test_every_algorithm_splits_like_naive(subs: list[tuple[list[str], int, str | None]],
                                           topics: list[list[str]]) -> None:
    matchers = [tm.Matcher("mqtt", a, group_policy="hash") for a in tm.ALGORITHMS]
    for words, sub, group in subs:
        for m in matchers:
            try:
                m.subscribe("/".join(words), sub, group=group)
            except tm.InvalidPattern:
                pass
    texts = ["/".join(t) for t in topics if "/".join(t)]
    oracle = matchers[tm.ALGORITHMS.index("naive")]
    for m in matchers:
        for t in texts:
            plain, groups = m.lookup_groups(t)
            want_plain, want_groups = oracle.lookup_groups(t)
            assert sorted(plain) == sorted(want_plain), (m.algorithm, t)
            assert {k: sorted(v) for k, v in groups.items()} == {
                k: sorted(v) for k, v in want_groups.items()}, (m.algorithm, t)
            # hash is deterministic: the same member as naive's.
            assert sorted(m.lookup(t)) == sorted(oracle.lookup(t)), (m.algorithm, t)


def test_threads_never_lose_a_message_of_a_group() -> None:
    m = tm.Matcher("amqp", "cstrie")
    m.subscribe("jobs.*", "stable", group="q")
    stop = threading.Event()

    def churn() -> None:
        k = 0
        while not stop.is_set():
            sid = m.subscribe("jobs.*", f"temp-{k % 7}", group="q")
            m.unsubscribe(sid)
            k += 1

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for _ in range(3000):
            assert len(m.lookup("jobs.x")) == 1
            assert all(len(r) == 1 for r in m.lookup_many(["jobs.x"] * 5))
    finally:
        stop.set()
        worker.join()


def test_threads_get_each_groups_own_key_while_groups_come_and_go() -> None:
    # Groups of new names take the places of those that left while other threads list them:
    # every key a listing gives is its members' group's (member "m{k}" is in group "g{k}").
    m = tm.Matcher("mqtt", "cstrie")
    m.subscribe("$share/g-stable/jobs/#", "m-stable")
    stop = threading.Event()
    wrong: list[object] = []

    def churn(first: int) -> None:
        k = first
        while not stop.is_set():
            sid = m.subscribe(f"$share/g{k}/jobs/#", f"m{k}")
            m.unsubscribe(sid)
            k += 2

    def read() -> None:
        for _ in range(2000):
            _, groups = m.lookup_groups("jobs/x")
            for (name, pattern), members in groups.items():
                if pattern != "jobs/#" or members != [f"m{name[1:]}"]:
                    wrong.append((name, pattern, members))
            if ("g-stable", "jobs/#") not in groups:
                wrong.append("stable group missing")

    run_together([read, read], [lambda: churn(0), lambda: churn(1)], stop)
    assert wrong == []


@pytest.mark.parametrize("algorithm", ["trie", "cstrie", "inverted_bitmap"])
def test_a_member_leaving_and_coming_back_is_never_lost_to_a_lookup(algorithm: str) -> None:
    """A member that leaves, comes back under its id and leaves again has two releases of its
    object pending; a lookup pinned between the two departures that chose it still delivers
    to it (the first release must not empty its slot)."""
    m = tm.Matcher("mqtt", algorithm)
    m.subscribe("$share/G1/jobs/#", "stable")
    stop = threading.Event()
    empty: list[int] = []

    def churn() -> None:
        while not stop.is_set():
            m.unsubscribe(m.subscribe("$share/G1/jobs/#", "comes-back"))

    def read() -> None:
        batch = ["jobs/b/c"] * 400
        deadline = time.monotonic() + 3
        while not stop.is_set() and time.monotonic() < deadline:
            rows = m.lookup_many(batch)
            empty.extend(i for i, row in enumerate(rows) if not row)
            if empty:
                break

    run_together([read, read], [churn, churn], stop)
    assert not empty, f"{len(empty)} rows reached no member of G1"
    assert m.lookup("jobs/x") == ["stable"]


#: Run in a child process (a crash must fail the test, not end pytest): while a long batch
#: keeps its thread pinned, subscribers leave by the thousand, each release of an object
#: waiting in the epoch collector's queue; then short-lived threads on small stacks exit,
#: and each exit's last pin may collect that queue.
RELEASES_AT_THREAD_EXIT = """
import threading, topicmatch as tm
m = tm.Matcher("mqtt", "trie")
m.subscribe("$share/G1/jobs/#", "stable")
done = threading.Event()
def reader():
    m.lookup_many(["jobs/b/c"] * 400_000)
    done.set()
def writer():
    k = 0
    while not done.is_set():
        m.unsubscribe(m.subscribe("$share/G1/jobs/#", f"x{k}"))
        k += 1
w = threading.Thread(target=writer); r = threading.Thread(target=reader)
w.start(); r.start(); r.join(); w.join()
threading.stack_size(256 * 1024)
for j in range(200):
    t = threading.Thread(target=lambda: [m.lookup("jobs/b/c") for _ in range(j % 150 + 1)])
    t.start(); t.join()
print("ok")
"""


def test_releases_collected_as_threads_exit_do_not_overflow_their_stacks() -> None:
    done = subprocess.run([sys.executable, "-c", RELEASES_AT_THREAD_EXIT], capture_output=True,
                          text=True, timeout=300)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr[-2000:]


#: A held subscription of the mixed-subscription properties: pattern, subscriber, group and
#: `where=` criteria.
Held = tuple[str, str | int, str | None, dict[str, int] | None]


def model(dialect: str, held: dict[int, Held], topic: str, message: dict[str, object] | None
          ) -> tuple[set[str | int], dict[tuple[str, str], set[str | int]]]:
    """What `lookup_groups` must give for `topic` and `message`: the plain and `where=`
    subscribers matching (`tm.matches`, and the criteria read here), and each matching group
    with its members."""
    value = (message or {}).get("k")
    plain = {sub for p, sub, group, where in held.values()
             if group is None and tm.matches(p, topic, dialect=dialect)
             and (where is None or (value == where["k"] and type(value) is type(where["k"])))}
    groups: dict[tuple[str, str], set[str | int]] = {}
    for p, sub, group, _ in held.values():
        if group is not None and tm.matches(p, topic, dialect=dialect):
            groups.setdefault((group, p), set()).add(sub)
    return plain, groups


def delivered(dialect: str, got: Sequence[object], plain: set[str | int],
              groups: dict[tuple[str, str], set[str | int]]) -> bool:
    """Every plain subscriber once, and one member of each matching group (a member
    also delivered otherwise is not delivered twice); in NATS the groups of one name are one
    queue, served once, as nats-server serves a queue whatever the subjects it matched by."""
    if dialect == "nats":
        queues: dict[tuple[str, str], set[str | int]] = {}
        for (name, _), members in groups.items():
            queues.setdefault((name, ""), set()).update(members)
        groups = queues
    picked = set(got) - plain
    return (len(got) == len(set(got)) and plain <= set(got)
            and len(picked) <= len(groups)
            and all(set(got) & members for members in groups.values())
            and picked <= set().union(*groups.values()))


def valid_topic(dialect: str, topic: str) -> bool:
    """Whether `topic` is a topic `dialect` accepts (what `matches` checks of its topic)."""
    try:
        tm.matches("#" if dialect != "nats" else ">", topic, dialect=dialect)
    except tm.InvalidTopic:
        return False
    return True


@given(dialect=st.sampled_from(tm.DIALECTS), data=st.data())
def test_plain_filtered_and_group_subscriptions_together(dialect: str,
                                                         data: st.DataObject) -> None:
    """Plain, `where=` and group subscriptions in one matcher, some of them dropped: every
    algorithm, through `lookup_groups` (also of a pickled copy), `lookup`, `lookup_many` with
    fields, `matches_any` and `lookup_arrow`, against a model of the held subscriptions read
    with `tm.matches` and the criteria."""
    sep = "/" if dialect == "mqtt" else "."
    pattern = st.lists(st.sampled_from(["a", "b", "", "*", "#", "+", ">"]), min_size=1,
                       max_size=3).map(sep.join)
    subs: list[tuple[str, str | int, str | None, int | None]] = data.draw(
        st.lists(st.tuples(pattern, st.sampled_from(["p", "q", 1, 2]),
                           st.sampled_from([None, "g", "h"]), st.sampled_from([None, 0, 1])),
                 max_size=12))
    drops = data.draw(st.lists(st.integers(0, 11), max_size=4))
    topics = data.draw(st.lists(st.lists(st.sampled_from(["a", "b", "", "$s"]), min_size=1,
                                         max_size=3).map(sep.join), min_size=1, max_size=5))
    topics = [t for t in topics if valid_topic(dialect, t)]
    messages: list[dict[str, object] | None] = data.draw(st.lists(
        st.sampled_from([None, {}, {"k": 0}, {"k": 1}, {"k": "0"}]),
        min_size=len(topics), max_size=len(topics)))
    for algorithm in tm.ALGORITHMS:
        m = tm.Matcher(dialect, algorithm)
        held: dict[int, Held] = {}
        for p, sub, group, value in subs:
            # A group subscription takes no criteria.
            where: dict[str, int] | None = (
                None if value is None or group is not None else {"k": value})
            try:
                held[m.subscribe(p, sub, group=group, where=where)] = (p, sub, group, where)
            except tm.InvalidPattern:
                pass
        ids = list(held)
        for i in drops:
            if i < len(ids) and ids[i] in held:
                assert m.unsubscribe(ids[i])
                del held[ids[i]]

        copy = pickle.loads(pickle.dumps(m))
        rows = m.lookup_many(topics, fields=messages)
        for topic, message, row in zip(topics, messages, rows):
            plain, groups = model(dialect, held, topic, message)
            got_plain, got_groups = m.lookup_groups(topic, message)
            case = (algorithm, topic, message)
            assert len(got_plain) == len(set(got_plain)) and set(got_plain) == plain, case
            assert {k: set(v) for k, v in got_groups.items()} == groups, case
            assert m.matches_any(topic, message) == bool(plain or groups), case
            for got in (m.lookup(topic, message), row):
                assert delivered(dialect, got, plain, groups), (case, got)
            plain_copy, groups_copy = copy.lookup_groups(topic, message)
            assert set(plain_copy) == plain and {
                k: set(v) for k, v in groups_copy.items()} == groups, case
        # Arrow rows carry no fields: the messages without them.
        table = m.subscriber_table()
        lists = pa.array(m.lookup_arrow(pa.array(topics, pa.string()))).to_pylist()
        for topic, indices in zip(topics, lists):
            assert delivered(dialect, [table[i] for i in indices],
                             *model(dialect, held, topic, None)), (
                algorithm, topic)


@given(dialect=st.sampled_from(tm.DIALECTS), data=st.data())
def test_caches_follow_mixed_subscriptions_as_they_change(dialect: str,
                                                          data: st.DataObject) -> None:
    """Lookups between subscribes and unsubscribes of plain, `where=` and group subscriptions:
    the result caches (`cstrie` and `inverted_bitmap` with small capacities) never answer
    from before a change, and every algorithm gives the model's answer after each one, its
    `covering` and `intersecting` those of `tm.covers` and `tm.intersects`."""
    sep = "/" if dialect == "mqtt" else "."
    words = st.lists(st.sampled_from(["a", "b", "*", "#", "+", ">"]), min_size=1, max_size=3)
    topic_words = st.lists(st.sampled_from(["a", "b", "$s"]), min_size=1, max_size=3)
    # (what, pattern or topic, subscriber, group, criterion's value, which id, message)
    ops: list[tuple[str, str, str | int, str | None, int | None, int,
                    dict[str, object] | None]] = data.draw(st.lists(st.one_of(
        st.tuples(st.just("subscribe"), words.map(sep.join), st.sampled_from(["p", "q", 1]),
                  st.sampled_from([None, "g"]), st.sampled_from([None, 0, 1]), st.just(0),
                  st.none()),
        st.tuples(st.just("unsubscribe"), st.just(""), st.just(0), st.none(), st.none(),
                  st.integers(0, 15), st.none()),
        st.tuples(st.just("look"), topic_words.map(sep.join), st.just(0), st.none(),
                  st.none(), st.just(0), st.sampled_from([None, {"k": 0}, {"k": 1}])),
        st.tuples(st.just("relate"), words.map(sep.join), st.just(0), st.none(), st.none(),
                  st.just(0), st.none())),
        max_size=30))
    matchers = [tm.Matcher(dialect, a) for a in tm.ALGORITHMS] + [
        tm.Matcher(dialect, "cstrie", cache_capacity=8),
        tm.Matcher(dialect, "inverted_bitmap", cache_capacity=2)]
    held: dict[int, Held] = {}
    issued: list[int] = []
    for what, text, sub, group, value, which, message in ops:
        if what == "subscribe":
            where = None if value is None or group is not None else {"k": value}
            try:
                ids = {m.subscribe(text, sub, group=group, where=where) for m in matchers}
            except tm.InvalidPattern:
                continue
            assert len(ids) == 1, text
            sid = ids.pop()
            held[sid] = (text, sub, group, where)
            issued.append(sid)
        elif what == "unsubscribe" and which < len(issued):
            sid = issued[which]
            assert {m.unsubscribe(sid) for m in matchers} == {sid in held}, sid
            held.pop(sid, None)
        elif what == "relate":
            try:
                tm.covers(text, text, dialect=dialect)
            except tm.InvalidPattern:
                continue
            covering = {sid for sid, (p, *_) in held.items()
                        if tm.covers(p, text, dialect=dialect)}
            intersecting = {sid for sid, (p, *_) in held.items()
                            if tm.intersects(p, text, dialect=dialect)}
            for m in matchers:
                assert {sid for sid, *_ in m.covering(text)} == covering, (m.algorithm, text)
                assert {sid for sid, *_ in m.intersecting(text)} == intersecting, (
                    m.algorithm, text)
        elif what == "look" and valid_topic(dialect, text):
            plain, groups = model(dialect, held, text, message)
            for m in matchers:
                case = (m.algorithm, m.cache_capacity, text, message)
                got_plain, got_groups = m.lookup_groups(text, message)
                assert set(got_plain) == plain, case
                assert {k: set(v) for k, v in got_groups.items()} == groups, case
                assert delivered(dialect, m.lookup(text, message), plain, groups), case
                assert delivered(dialect, m.lookup_many([text], fields=[message])[0], plain,
                                 groups), case
                if message is None:
                    # A dictionary's repeated topic, looked up once unless a group was held.
                    table = m.subscriber_table()
                    column = pa.array([text, text, None]).dictionary_encode()
                    *rows, null = pa.array(m.lookup_arrow(column)).to_pylist()
                    assert null is None, case
                    for row in rows:
                        assert delivered(dialect, [table[i] for i in row], plain, groups), case
