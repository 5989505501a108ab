//! Taking the GIL back without falling asleep when another thread is about to hand it over.
//!
//! A thread that asks CPython for the GIL while another thread holds it sleeps on a condition
//! variable until the holder drops it, and waking a sleeping thread costs tens of
//! microseconds on a virtual machine: as long as a whole `lookup_many` of 100 topics, and a
//! tenth of one of 1,000. Two threads that alternate (one looks up with the GIL released while
//! the other builds its rows holding it) meet that cost at nearly every hand-over.
//!
//! So before re-taking the GIL, a thread that finished its detached work spins (briefly, on
//! its own core) while the GIL is held by a thread that took it back here and is expected to
//! release it here soon; once that thread releases it, the re-take finds the GIL free and
//! takes it without sleeping. This is only a guess about when the GIL will be free, so every
//! spin is bounded: it ends when the holder releases, when the hold has lasted well over the
//! usual hold, or when it would exceed [`SPIN_MAX`]; then the thread asks CPython as before.
//! Correctness never depends on it: the GIL itself is taken only through CPython.
//!
//! The bookkeeping is two atomics. [`HOLDER`] is the time the GIL was last re-taken here, or 0
//! once its holder released it here; every store to it is made holding the GIL, so the stores
//! are ordered by the GIL itself, and since the GIL has one holder, the latest re-take is the
//! only one that can still be holding it (a thread that went on to release it elsewhere, say
//! in `time.sleep`, leaves a stale time that the age bound expires). [`HOLD_NS`] is a running
//! average of how long a hold lasts from re-take to release, including the caller's Python
//! code in between (freeing the previous result, the loop), which nothing else here sees.
//! At most one thread spins at a time ([`SPINNING`]): with two cores, a second spinner could
//! take the core the holder needs.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The longest spin: past this, sleeping and a wake-up cost little in proportion.
const SPIN_MAX: u64 = 1_000_000;
/// Spin at least this long past the average hold: holds vary a little.
const SLACK: u64 = 20_000;
/// Spin without yielding the core for this long (a wake-up costs about as much).
const BUSY: u64 = 20_000;
/// A hold that lasts longer than this is not one of ours (the thread went off to do something
/// else): it does not count towards the average.
const HOLD_CAP: u64 = 10_000_000;

/// When (ns since [`epoch`]) the GIL was last re-taken by [`retaken`]; 0: released since.
static HOLDER: AtomicU64 = AtomicU64::new(0);
/// A running average of the hold, in ns (0: none seen yet).
static HOLD_NS: AtomicU64 = AtomicU64::new(0);
/// Whether a thread is spinning.
static SPINNING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The time this thread last re-took the GIL in [`retaken`] (0: never).
    static TAKEN_AT: Cell<u64> = const { Cell::new(0) };
}

fn now() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    // At least 1: 0 means "released". A u64 of ns lasts 584 years.
    (EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64).max(1)
}

/// Call without the GIL, just after releasing it: if this thread's re-take is still the
/// latest, marks the GIL released (a spinner may now take it without sleeping) and counts
/// the hold towards the average.
pub fn released() {
    let taken = TAKEN_AT.with(Cell::get);
    if taken == 0
        || HOLDER
            .compare_exchange(taken, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    let hold = now() - taken;
    if hold < HOLD_CAP {
        // Two threads may race here; losing one sample of an average is harmless.
        let avg = HOLD_NS.load(Ordering::Relaxed);
        let avg = if avg == 0 { hold } else { (avg * 7 + hold) / 8 };
        HOLD_NS.store(avg, Ordering::Relaxed);
    }
}

/// Call holding the GIL, just after taking it back.
pub fn retaken() {
    let t = now();
    TAKEN_AT.with(|c| c.set(t));
    HOLDER.store(t, Ordering::Relaxed);
}

/// Call without the GIL, just before asking for it: waits (spinning) while another thread that
/// re-took it in [`retaken`] is expected to release it soon.
pub fn wait_for_release() {
    static OFF: OnceLock<bool> = OnceLock::new();
    if *OFF.get_or_init(|| std::env::var_os("TM_NO_HANDOFF").is_some()) {
        return;
    }
    let held_since = HOLDER.load(Ordering::Acquire);
    if held_since == 0 {
        return;
    }
    let avg = HOLD_NS.load(Ordering::Relaxed);
    let deadline = held_since + (2 * avg + SLACK).min(SPIN_MAX);
    let start = now();
    if start >= deadline
        || SPINNING
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    loop {
        std::hint::spin_loop();
        // Acquire pairs with the Release of `released`'s compare-exchange.
        if HOLDER.load(Ordering::Acquire) != held_since {
            break;
        }
        let t = now();
        if t >= deadline {
            break;
        }
        if t - start > BUSY {
            // Past a short busy spell, let any other runnable process on this core go first.
            std::thread::yield_now();
        }
    }
    SPINNING.store(false, Ordering::Release);
}
