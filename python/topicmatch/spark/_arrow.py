"""The executor side: route one Arrow string array with one native call."""

from __future__ import annotations

from typing import NamedTuple

import pyarrow as pa

import topicmatch as tm
from topicmatch._native import _route_arrow


class RoutedRows(NamedTuple):
    """Flat routing of one array: output row ``i`` is input row ``rows[i]`` with
    ``subscribers[i]`` (null if none) and ``errors[i]`` (null unless the topic is invalid)."""

    rows: pa.Int32Array
    subscribers: pa.Int64Array
    errors: pa.StringArray


def route_array(
    matcher: tm.Matcher, topics: pa.Array | pa.ChunkedArray, *, keep_unmatched: bool = False
) -> RoutedRows:
    """Routes every topic of a ``string`` or ``large_string`` array; the matcher's subscribers
    must be ints. The buffers go to Rust as they are: no Python object per row."""
    if isinstance(topics, pa.ChunkedArray):
        topics = topics.combine_chunks()
    if topics.type == pa.large_string():
        large = True
    elif topics.type == pa.string():
        large = False
    else:
        raise TypeError(f"topics must be a string or large_string array, not {topics.type}")
    validity, offsets, data = topics.buffers()
    count, rows, sub_valid, subs, err_valid, err_offsets, err_data = _route_arrow(
        matcher, len(topics), topics.offset, validity, offsets, data, large, keep_unmatched
    )
    wrap = pa.py_buffer
    return RoutedRows(
        rows=pa.Array.from_buffers(pa.int32(), count, [None, wrap(rows)]),
        subscribers=pa.Array.from_buffers(
            pa.int64(), count, [sub_valid and wrap(sub_valid), wrap(subs)]
        ),
        errors=pa.Array.from_buffers(
            pa.string(), count, [err_valid and wrap(err_valid), wrap(err_offsets), wrap(err_data)]
        ),
    )
