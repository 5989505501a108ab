"""The executor side: route one Arrow string array with one native call,
``Matcher.lookup_arrow``, and spread its lists into output rows with Arrow compute."""

from __future__ import annotations

from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

import topicmatch as tm

#: One null subscriber: the single output row of a message with an error, or of an unmatched
#: one that is kept.
_ONE_EMPTY_ROW = pa.scalar([None], pa.list_(pa.uint32()))


class RoutedRows(NamedTuple):
    """Flat routing of one array: output row ``i`` is input row ``rows[i]`` with
    ``subscribers[i]`` (null if none) and ``errors[i]`` (null unless the topic is invalid)."""

    rows: pa.Int32Array
    subscribers: pa.Int64Array
    errors: pa.StringArray


def subscriber_values(matcher: tm.Matcher) -> pa.Int64Array:
    """The matcher's subscribers by index (``Matcher.subscriber_table``) as an Arrow array;
    the matcher's subscribers must be ints (else ``TypeError``)."""
    table = matcher.subscriber_table()
    if not all(s is None or type(s) is int for s in table):
        raise TypeError("routing needs a matcher whose subscribers are ints")
    return pa.array(table, pa.int64())


def route_array(
    matcher: tm.Matcher,
    topics: pa.Array | pa.ChunkedArray,
    *,
    keep_unmatched: bool = False,
    values: pa.Int64Array | None = None,
) -> RoutedRows:
    """Routes every topic of a ``string`` or ``large_string`` array; the matcher's subscribers
    must be ints (``values``: their :func:`subscriber_values`, if already at hand). A topic
    matching ``k`` subscribers gives ``k`` rows; an invalid or null topic one row with an
    error; with ``keep_unmatched`` a topic matching nobody one row with neither."""
    if values is None:
        values = subscriber_values(matcher)
    lists_out, errors_out = matcher.lookup_arrow(topics, errors=True)
    lists = pa.array(lists_out)
    errors = pa.array(errors_out)
    if isinstance(topics, pa.ChunkedArray):
        topics = topics.combine_chunks()
    errors = pc.if_else(topics.is_null(), pa.scalar("the topic is null"), errors)
    one_row = errors.is_valid()
    if keep_unmatched:
        one_row = pc.or_(one_row, pc.equal(pc.fill_null(pc.list_value_length(lists), 0), 0))
    padded = pc.if_else(one_row, _ONE_EMPTY_ROW, lists)
    rows = pc.list_parent_indices(padded)
    return RoutedRows(
        rows=rows.cast(pa.int32()),
        subscribers=values.take(pc.list_flatten(padded)),
        errors=errors.take(rows),
    )
