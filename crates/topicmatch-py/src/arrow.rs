//! Routing a whole Arrow string array in one call: the executor side of `topicmatch.spark`.
//!
//! Python passes the array's buffers (validity bitmap, offsets, UTF-8 data), its offset and its
//! length. They are copied into owned vectors while the GIL is held (`PyBuffer::to_vec`: no
//! `unsafe`, and nothing can change them once the GIL is released), the offsets are checked
//! against the data, and every lookup runs with the GIL released. The result is a set of flat
//! buffers Python wraps with `pa.Array.from_buffers`, so no Python object is made per row:
//!
//! * `rows`: `int32` row index (into the array, from 0) of each output row, ascending;
//! * `subscribers`: `int64` subscriber value of each output row, null for a row without one;
//! * `errors`: a `string` array, the reason a row's topic is invalid, else null.
//!
//! A row whose topic matches `k` subscribers gives `k` output rows; a row whose topic is invalid
//! or null gives one row with an error; with `keep_unmatched` a row matching nobody gives one
//! row with neither. The matcher's subscribers must be `int`s (the pipeline subscribes the index
//! of each distinct subscriber value and maps it back with `take`).

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use topicmatch_core::{Engine, Registry, Subscriber, SubscriberId};

use crate::gil;
use crate::matcher::PyMatcher;

/// The used window of an Arrow `string`/`large_string` array, copied and bounds-checked.
struct StringColumn {
    validity: Option<Vec<u8>>,
    /// `len + 1` byte positions into `data`, non-decreasing and at most `data.len()`.
    bounds: Vec<usize>,
    data: Vec<u8>,
    /// The array's offset: bit `offset + i` of `validity` belongs to row `i`.
    offset: usize,
}

impl StringColumn {
    /// Checks the raw buffers and keeps the window `[offset, offset + len]` of the offsets.
    fn new(
        validity: Option<Vec<u8>>,
        offsets: &[u8],
        data: Vec<u8>,
        offset: usize,
        len: usize,
        large: bool,
    ) -> Result<Self, String> {
        let width = if large { 8 } else { 4 };
        let end = offset.checked_add(len).ok_or("offset + length overflows")?;
        let needed = end
            .checked_add(1)
            .and_then(|n| n.checked_mul(width))
            .ok_or("offset + length overflows")?;
        if offsets.len() < needed {
            return Err(format!(
                "the offsets buffer holds {} bytes; offset {offset} and length {len} need {needed}",
                offsets.len()
            ));
        }
        if let Some(bits) = &validity {
            if bits.len() < end.div_ceil(8) {
                return Err(format!(
                    "the validity bitmap holds {} bytes; offset {offset} and length {len} need {}",
                    bits.len(),
                    end.div_ceil(8)
                ));
            }
        }
        let window = &offsets[offset * width..needed];
        let mut bounds = Vec::with_capacity(len + 1);
        for chunk in window.chunks_exact(width) {
            let value = if large {
                i64::from_ne_bytes(chunk.try_into().expect("chunks of 8 bytes"))
            } else {
                i64::from(i32::from_ne_bytes(
                    chunk.try_into().expect("chunks of 4 bytes"),
                ))
            };
            let position = usize::try_from(value)
                .map_err(|_| format!("negative offset {value} in a string array"))?;
            if position > data.len() {
                return Err(format!(
                    "offset {position} is past the end of the {}-byte data buffer",
                    data.len()
                ));
            }
            if bounds.last().is_some_and(|&last| position < last) {
                return Err(format!("decreasing offsets ({position}) in a string array"));
            }
            bounds.push(position);
        }
        Ok(StringColumn {
            validity,
            bounds,
            data,
            offset,
        })
    }

    fn len(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Row `i`'s bytes, or `None` if the row is null.
    fn get(&self, i: usize) -> Option<&[u8]> {
        if let Some(bits) = &self.validity {
            let bit = self.offset + i;
            if bits[bit / 8] & (1 << (bit % 8)) == 0 {
                return None;
            }
        }
        Some(&self.data[self.bounds[i]..self.bounds[i + 1]])
    }
}

/// An Arrow validity bitmap under construction, remembering whether any bit is unset.
#[derive(Default)]
struct Bitmap {
    bytes: Vec<u8>,
    len: usize,
    nulls: usize,
}

impl Bitmap {
    fn push(&mut self, valid: bool) {
        if self.len % 8 == 0 {
            self.bytes.push(0);
        }
        if valid {
            *self.bytes.last_mut().expect("pushed above") |= 1 << (self.len % 8);
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }

    /// The bitmap, or `None` when every bit is set (Arrow's "no nulls").
    fn finish(self) -> Option<Vec<u8>> {
        (self.nulls > 0).then_some(self.bytes)
    }
}

/// The output buffers, described in the module docs.
#[derive(Default)]
struct Routed {
    rows: Vec<u8>,
    count: usize,
    subscriber_valid: Bitmap,
    subscribers: Vec<u8>,
    error_valid: Bitmap,
    error_offsets: Vec<u8>,
    error_data: Vec<u8>,
}

impl Routed {
    fn push(
        &mut self,
        row: usize,
        subscriber: Option<i64>,
        error: Option<&str>,
    ) -> Result<(), String> {
        let row = i32::try_from(row).map_err(|_| "more than 2^31 rows in one batch")?;
        self.rows.extend_from_slice(&row.to_ne_bytes());
        self.subscriber_valid.push(subscriber.is_some());
        self.subscribers
            .extend_from_slice(&subscriber.unwrap_or(0).to_ne_bytes());
        self.error_valid.push(error.is_some());
        self.error_data
            .extend_from_slice(error.unwrap_or("").as_bytes());
        let end = i32::try_from(self.error_data.len())
            .map_err(|_| "more than 2 GiB of error text in one batch")?;
        self.error_offsets.extend_from_slice(&end.to_ne_bytes());
        self.count += 1;
        Ok(())
    }
}

/// Why a batch could not be routed (not a per-row error: those go into the output).
enum Failure {
    Malformed(String),
    NotInt(SubscriberId),
}

fn subscriber_value(registry: &Registry, id: SubscriberId) -> Result<Option<i64>, Failure> {
    match registry.get(id) {
        Some(Subscriber::Int(value)) => Ok(Some(*value)),
        Some(Subscriber::Str(_)) => Err(Failure::NotInt(id)),
        // The subscriber left during the lookup: it no longer receives anything.
        None => Ok(None),
    }
}

fn route(engine: &Engine, column: &StringColumn, keep_unmatched: bool) -> Result<Routed, Failure> {
    let mut out = Routed::default();
    out.error_offsets.extend_from_slice(&0_i32.to_ne_bytes());
    let mut ids = Vec::new();
    engine.with_registry(|registry| {
        for row in 0..column.len() {
            let error = match column.get(row).map(std::str::from_utf8) {
                None => Some("the topic is null".to_owned()),
                Some(Err(_)) => Some("the topic is not valid UTF-8".to_owned()),
                Some(Ok(topic)) => {
                    ids.clear();
                    engine
                        .lookup_into(topic, &mut ids)
                        .err()
                        .map(|e| e.to_string())
                }
            };
            if let Some(error) = error {
                out.push(row, None, Some(&error))
                    .map_err(Failure::Malformed)?;
                continue;
            }
            let before = out.count;
            for &id in &ids {
                if let Some(value) = subscriber_value(registry, id)? {
                    out.push(row, Some(value), None)
                        .map_err(Failure::Malformed)?;
                }
            }
            if keep_unmatched && out.count == before {
                out.push(row, None, None).map_err(Failure::Malformed)?;
            }
        }
        Ok(out)
    })
}

type RoutedBuffers<'py> = (
    usize,
    Bound<'py, PyBytes>,
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyBytes>,
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);

/// Copies a buffer of bytes: format `B` (`bytes`) or `b` (what `pyarrow.Buffer` exports).
fn copy_bytes(py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(unsigned) = PyBuffer::<u8>::get(buffer) {
        return unsigned.to_vec(py);
    }
    let signed = PyBuffer::<i8>::get(buffer)?.to_vec(py)?;
    Ok(signed.into_iter().map(|b| b.to_ne_bytes()[0]).collect())
}

fn bytes_of(py: Python<'_>, buffer: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    buffer.map(|b| copy_bytes(py, b)).transpose()
}

/// Routes every topic of one Arrow string array: see the module docs for the result.
#[pyfunction]
#[pyo3(name = "_route_arrow")]
#[pyo3(signature = (matcher, length, offset, validity, offsets, data, large, keep_unmatched))]
#[allow(clippy::too_many_arguments)] // The parts of one Arrow array, passed flat.
#[allow(clippy::fn_params_excessive_bools)] // Two flags of the call, named at the Python side.
pub fn route_arrow<'py>(
    py: Python<'py>,
    matcher: &Bound<'py, PyMatcher>,
    length: usize,
    offset: usize,
    validity: Option<&Bound<'py, PyAny>>,
    offsets: &Bound<'py, PyAny>,
    data: Option<&Bound<'py, PyAny>>,
    large: bool,
    keep_unmatched: bool,
) -> PyResult<RoutedBuffers<'py>> {
    let validity = bytes_of(py, validity)?;
    let offsets = copy_bytes(py, offsets)?;
    let data = bytes_of(py, data)?.unwrap_or_default();
    let engine = matcher.get().engine();
    let routed = gil::detach(py, || {
        let column = StringColumn::new(validity, &offsets, data, offset, length, large)
            .map_err(Failure::Malformed)?;
        route(engine, &column, keep_unmatched)
    })?
    .map_err(|failure| match failure {
        Failure::Malformed(message) => {
            PyValueError::new_err(format!("malformed Arrow string array: {message}"))
        }
        Failure::NotInt(id) => PyTypeError::new_err(format!(
            "_route_arrow needs a matcher whose subscribers are ints (subscriber #{id} is a str)"
        )),
    })?;
    let bytes = |b: &[u8]| PyBytes::new(py, b);
    Ok((
        routed.count,
        bytes(&routed.rows),
        routed.subscriber_valid.finish().map(|b| bytes(&b)),
        bytes(&routed.subscribers),
        routed.error_valid.finish().map(|b| bytes(&b)),
        bytes(&routed.error_offsets),
        bytes(&routed.error_data),
    ))
}
