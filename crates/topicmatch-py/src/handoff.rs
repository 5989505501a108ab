//! Taking the GIL back without falling asleep when another thread is about to hand it over.
//!
//! A thread that asks CPython for the GIL while another thread holds it sleeps on a condition
//! variable until the holder drops it, and waking a sleeping thread costs tens of
//! microseconds on a virtual machine: as long as a whole `lookup_many` of 100 topics, and a
//! tenth of one of 1,000. Two threads that alternate (one looks up with the GIL released while
//! the other builds its rows holding it) meet that cost at nearly every hand-over.
//!
//! So before re-taking the GIL, a thread that finished its detached work spins (on its own
//! core) while the GIL is held by a thread that re-took it here and is expected to release it
//! here soon; once that thread has released it, the re-take finds the GIL free and takes it
//! without sleeping. This is only a guess about when the GIL will be free, so every spin is
//! bounded: it ends when the holder releases, or at a deadline of twice the usual hold past
//! the moment the holder took the GIL (at most [`Limits::spin_max`]); then the thread asks
//! CPython as before. At most one thread spins at a time: with two cores, a second spinner
//! could take the core the holder needs. Correctness never depends on any of this: the GIL
//! itself is only ever taken through CPython.
//!
//! The state is two words. `holder` is the time the GIL was last re-taken here, or 0 once
//! that thread released it here (a compare-exchange from its own time, so a release never
//! clears a later thread's re-take). The release is marked just after CPython has dropped the
//! GIL, never before: a spinner that sees it and asks for the GIL finds it free, instead of
//! going to sleep on it a moment too early. Re-takes are stored holding the GIL, so they are
//! ordered by it, and as the GIL has one holder the latest re-take is the only one that can
//! still be holding it; a thread that went on to release the GIL elsewhere (`time.sleep`,
//! CPython's switch interval) leaves a stale time that the deadline expires. `hold_ns` is a
//! running average of a hold from re-take to release, which includes the caller's Python code
//! in between (freeing the previous result, its loop), which nothing else here sees.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// How long a spin may last.
#[derive(Clone, Copy)]
pub struct Limits {
    /// Added to twice the average hold: holds vary.
    pub slack: u64,
    /// The longest spin, in ns: past this, sleeping and a wake-up cost little in proportion.
    pub spin_max: u64,
    /// Spin without yielding the core for this long (a wake-up costs about as much), then
    /// let any other runnable process on this core go first between checks.
    pub busy: u64,
    /// A hold longer than this is not one of a lookup loop (the thread went off to do
    /// something else): it does not count towards the average.
    pub hold_cap: u64,
}

/// The limits of the one instance, [`GIL`].
const LIMITS: Limits = Limits {
    slack: 20_000,
    spin_max: 1_000_000,
    busy: 20_000,
    hold_cap: 10_000_000,
};

/// The GIL's hand-off state, shared by every thread of the process.
pub static GIL: Handoff = Handoff::new(LIMITS);

/// Whether threads spin for the GIL at all: set once by [`configure`].
static SPIN: AtomicBool = AtomicBool::new(false);

/// Turns the spin on, when the module is imported, unless the interpreter has no GIL (a
/// free-threaded build, where nothing is handed over) or the environment variable
/// `TOPICMATCH_GIL_SPIN` is `0` (as OpenMP's `OMP_WAIT_POLICY=passive`: for a machine whose
/// cores are all busy with other work, where a spinner only takes turns from it).
pub fn configure(gil_enabled: bool) {
    let off = matches!(std::env::var_os("TOPICMATCH_GIL_SPIN"), Some(v) if v == "0");
    SPIN.store(gil_enabled && !off, Ordering::Relaxed);
}

/// Whether [`configure`] turned the spin on.
pub fn spin_enabled() -> bool {
    SPIN.load(Ordering::Relaxed)
}

/// What [`Handoff::wait_for_release`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Nobody re-took the GIL here since its last release here: no spin.
    Free,
    /// The holder's deadline had passed (a stale or a long hold): no spin.
    Late,
    /// Another thread was spinning: no spin.
    Busy,
    /// Spun until the holder released it.
    Released,
    /// Spun until the deadline.
    Expired,
}

/// The hand-off state: see the module docs.
pub struct Handoff {
    holder: AtomicU64,
    hold_ns: AtomicU64,
    spinning: AtomicBool,
    limits: Limits,
}

/// Nanoseconds on a process-wide monotonic clock, at least 1 (0 means "released").
fn now() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    // A u64 of nanoseconds lasts 584 years.
    (START.get_or_init(Instant::now).elapsed().as_nanos() as u64).max(1)
}

impl Handoff {
    pub const fn new(limits: Limits) -> Self {
        Handoff {
            holder: AtomicU64::new(0),
            hold_ns: AtomicU64::new(0),
            spinning: AtomicBool::new(false),
            limits,
        }
    }

    /// Call holding the GIL, just after taking it back; returns this re-take's time, for
    /// [`Handoff::released`].
    pub fn retaken(&self) -> u64 {
        let t = now();
        // Relaxed: a spinner only compares it with the time it read before.
        self.holder.store(t, Ordering::Relaxed);
        t
    }

    /// Call just after releasing the GIL, with the time of this thread's last re-take (0:
    /// none): if that re-take is still the latest, marks the GIL released, so that a spinner
    /// takes it without sleeping, and counts the hold towards the average.
    pub fn released(&self, taken: u64) {
        if taken == 0
            || self
                .holder
                .compare_exchange(taken, 0, Ordering::Release, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let hold = now().saturating_sub(taken);
        if hold < self.limits.hold_cap {
            // Two threads may race here; losing one sample of an average is harmless.
            let avg = self.hold_ns.load(Ordering::Relaxed);
            let avg = if avg == 0 { hold } else { (avg * 7 + hold) / 8 };
            self.hold_ns.store(avg, Ordering::Relaxed);
        }
    }

    /// Call without the GIL, just before asking for it: spins while a thread that re-took it
    /// here is expected to release it soon (see the module docs).
    pub fn wait_for_release(&self) -> Wait {
        // Acquire pairs with the Release of `released`'s compare-exchange (as below).
        let held_since = self.holder.load(Ordering::Acquire);
        if held_since == 0 {
            return Wait::Free;
        }
        let hold = 2 * self.hold_ns.load(Ordering::Relaxed) + self.limits.slack;
        let deadline = held_since.saturating_add(hold.min(self.limits.spin_max));
        let start = now();
        if start >= deadline {
            return Wait::Late;
        }
        if self
            .spinning
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Wait::Busy;
        }
        let outcome = loop {
            std::hint::spin_loop();
            if self.holder.load(Ordering::Acquire) != held_since {
                break Wait::Released;
            }
            let t = now();
            if t >= deadline {
                break Wait::Expired;
            }
            if t - start > self.limits.busy {
                std::thread::yield_now();
            }
        };
        self.spinning.store(false, Ordering::Release);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::thread;
    use std::time::Duration;

    use super::*;

    const SECONDS: u64 = 1_000_000_000;

    fn handoff(slack: u64, spin_max: u64) -> Arc<Handoff> {
        Arc::new(Handoff::new(Limits {
            slack,
            spin_max,
            busy: 20_000,
            hold_cap: 50_000_000,
        }))
    }

    #[test]
    fn nothing_retaken_or_released_again_means_no_spin() {
        let h = handoff(60 * SECONDS, 60 * SECONDS);
        assert_eq!(h.wait_for_release(), Wait::Free);
        let taken = h.retaken();
        h.released(taken);
        assert_eq!(h.wait_for_release(), Wait::Free);
    }

    #[test]
    fn a_waiter_spins_until_the_holder_releases() {
        let h = handoff(60 * SECONDS, 60 * SECONDS);
        let taken = h.retaken();
        let released = Arc::new(AtomicBool::new(false));
        let holder = {
            let (h, released) = (Arc::clone(&h), Arc::clone(&released));
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(5));
                released.store(true, Ordering::SeqCst);
                h.released(taken);
            })
        };
        assert_eq!(h.wait_for_release(), Wait::Released);
        assert!(released.load(Ordering::SeqCst));
        holder.join().unwrap();
    }

    #[test]
    fn a_spin_ends_at_the_deadline_when_nobody_releases() {
        let h = handoff(50_000_000, 60 * SECONDS);
        h.retaken();
        assert_eq!(h.wait_for_release(), Wait::Expired);
        // The holder is now older than its deadline: later waiters do not spin at all.
        assert_eq!(h.wait_for_release(), Wait::Late);
    }

    #[test]
    fn the_spin_max_caps_a_long_average_hold() {
        let h = handoff(60 * SECONDS, 50_000_000);
        h.retaken();
        assert_eq!(h.wait_for_release(), Wait::Expired);
        assert_eq!(h.wait_for_release(), Wait::Late);
    }

    #[test]
    fn a_release_does_not_clear_a_later_retake() {
        let h = handoff(50_000_000, 60 * SECONDS);
        let first = h.retaken();
        thread::sleep(Duration::from_millis(1));
        let second = h.retaken();
        assert_ne!(first, second);
        h.released(first);
        // Still held by the second re-take: a waiter spins (to its deadline here).
        assert_eq!(h.wait_for_release(), Wait::Expired);
        h.released(second);
        assert_eq!(h.wait_for_release(), Wait::Free);
    }

    #[test]
    fn one_thread_spins_at_a_time() {
        let h = handoff(60 * SECONDS, 60 * SECONDS);
        let taken = h.retaken();
        let spinner = {
            let h = Arc::clone(&h);
            thread::spawn(move || h.wait_for_release())
        };
        while !h.spinning.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        assert_eq!(h.wait_for_release(), Wait::Busy);
        h.released(taken);
        assert_eq!(spinner.join().unwrap(), Wait::Released);
    }

    #[test]
    fn the_average_follows_the_holds_and_skips_long_ones() {
        let h = handoff(0, 60 * SECONDS);
        for _ in 0..3 {
            let taken = h.retaken();
            thread::sleep(Duration::from_millis(2));
            h.released(taken);
        }
        let avg = h.hold_ns.load(Ordering::Relaxed);
        assert!((2_000_000..50_000_000).contains(&avg), "{avg}");
        let taken = h.retaken();
        thread::sleep(Duration::from_millis(60));
        h.released(taken);
        assert_eq!(
            h.hold_ns.load(Ordering::Relaxed),
            avg,
            "a hold past the cap is not counted"
        );
    }

    #[test]
    fn the_spin_is_off_without_a_gil_or_when_the_environment_says_so() {
        // The only test that touches the process-wide switch or the variable.
        std::env::remove_var("TOPICMATCH_GIL_SPIN");
        configure(true);
        assert!(spin_enabled());
        configure(false);
        assert!(!spin_enabled());
        std::env::set_var("TOPICMATCH_GIL_SPIN", "0");
        configure(true);
        assert!(!spin_enabled());
        std::env::set_var("TOPICMATCH_GIL_SPIN", "1");
        configure(true);
        assert!(spin_enabled());
        std::env::remove_var("TOPICMATCH_GIL_SPIN");
    }
}
