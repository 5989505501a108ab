//! A batch call's driver (`Matcher.lookup_many`, `FieldMatcher.lookup_many`): its lookups
//! in parts, each part looked up and resolved to object addresses with the GIL released when
//! long (the rule of [`crate::gil`]), its rows made holding the GIL, and pending signal
//! handlers run between parts; and the buffers a thread keeps between calls ([`with_kept`]):
//! its id buffer, which `lookup` and `lookup_arrow` use too, and `lookup_groups`' own.

use std::cell::Cell;
use std::ops::Range;
use std::thread::LocalKey;

use pyo3::prelude::*;
use pyo3::types::PyList;
use topicmatch_core::SubscriberId;

use crate::objects::ObjectTable;
use crate::{errors, gil, rows};

/// Ids a thread's lookups reuse; emptied, and kept only up to this many (4 MiB a thread, held
/// until the thread ends: a batch of a thousand topics of 400 subscribers each).
pub(crate) const KEPT_IDS: usize = 1 << 19;

/// The ids of a part of a batch ([`rows()`]): 2 MiB, mostly still in the cache when resolved
/// to objects (`rows::resolve`) and when the part's rows are made. A batch of more is looked
/// up, resolved and made into rows a part at a time, releasing the GIL for each part's lookup
/// (topics of tens of thousands of subscribers each: every part's work takes milliseconds); a
/// batch of hundreds of topics of hundreds each stays one part, as parts of 256 KiB made it 5%
/// slower.
pub(crate) const RESOLVED_IDS: usize = 1 << 18;

thread_local! {
    static IDS: Cell<Vec<SubscriberId>> = const { Cell::new(Vec::new()) };
}

/// Buffers a thread keeps from one call to the next, so that a call does not allocate them.
pub(crate) trait Kept: Default {
    /// Empties them, keeping their room (and dropping any reference they hold: the caller
    /// holds the GIL).
    fn clear(&mut self);
    /// Whether their room is small enough to keep until the thread ends.
    fn small(&self) -> bool;
}

impl Kept for Vec<SubscriberId> {
    fn clear(&mut self) {
        Vec::clear(self);
    }

    fn small(&self) -> bool {
        self.capacity() <= KEPT_IDS
    }
}

/// Runs `f` with this thread's buffers of `kept` (empty), then empties them and keeps them
/// for the next call if they are small. A call nested inside `f` (none is expected) gets
/// buffers of its own.
pub(crate) fn with_kept<T: Kept, R>(
    kept: &'static LocalKey<Cell<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    let mut buffers = kept.with(Cell::take);
    let out = f(&mut buffers);
    buffers.clear();
    if buffers.small() {
        kept.with(|k| k.set(buffers));
    }
    out
}

/// [`with_kept`] of this thread's id buffer.
pub(crate) fn with_ids<R>(f: impl FnOnce(&mut Vec<SubscriberId>) -> R) -> R {
    with_kept(&IDS, f)
}

/// The rows of a batch of `len` items, one list of subscriber objects (from `table`) per item.
/// `look_up(part, ids, ends)` appends the subscriber ids of the items `part` in order to `ids`,
/// pushing `ids.len()` to `ends` after each item, as the core's batch calls do; it runs with
/// the GIL released when the part is long, timed into `cost`. An error it returns ends the
/// batch, as does an exception a signal handler raises between parts (Ctrl-C's); the rows made
/// so far are dropped.
pub fn rows<'py>(
    py: Python<'py>,
    cost: &gil::Cost,
    table: &ObjectTable,
    len: usize,
    look_up: impl Fn(Range<usize>, &mut Vec<SubscriberId>, &mut Vec<usize>) -> topicmatch_core::Result<()>
        + Sync,
) -> PyResult<Bound<'py, PyList>> {
    // Pinned before each part's lookup until its rows hold their objects, and renewed between
    // parts: a pin held for the whole of a long batch would hold back every release other
    // threads' departures defer meanwhile (each a few KB of the collector's) until it ended.
    let mut guard = crossbeam_epoch::pin();
    let mut rows = rows::Rows::new(py, len)?;
    // The thread's kept buffer: a batch's ids (megabytes on a high fan-out set) freed and
    // allocated again on every call would cost page faults whenever the allocator has given
    // the memory back to the system.
    with_ids(|ids| {
        let mut first = 0;
        while first < len {
            // Sized by what was measured so far, this call's parts included.
            let size = cost
                .topics_for_ids(RESOLVED_IDS)
                .min(cost.topics_for_ns(gil::PART_NS))
                .min(len - first);
            let part = first..first + size;
            let ends = cost
                .run(py, size, || {
                    ids.clear();
                    ids.reserve(cost.ids_capacity(size));
                    let mut ends = Vec::with_capacity(size);
                    look_up(part, ids, &mut ends)?;
                    // The objects' addresses, read with the GIL still released while the ids
                    // are in the cache; `guard`, pinned on this thread since before the
                    // lookup, keeps them alive until the rows hold them.
                    rows::resolve(table, &crossbeam_epoch::pin(), ids);
                    Ok(ends)
                })?
                .map_err(errors::to_py)?;
            cost.record_ids(ids.len(), ends.len());
            gil::guarded(|| rows.push(&guard, ids, &ends))?;
            guard.repin();
            first += size;
            if first < len {
                // A signal that came during the part (Ctrl-C): its handler runs now, and an
                // exception it raises ends the batch, the rows made so far dropped.
                py.check_signals()?;
            }
        }
        rows.finish()
    })
}
