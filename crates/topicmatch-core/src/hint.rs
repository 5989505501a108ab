//! A hint to the memory system: the topic store's walk and bulk inserts, the `cstrie`'s
//! breadth-first walk.

/// Asks for the cache line at `address` without waiting for it.
#[inline(always)]
#[allow(clippy::inline_always)] // a single instruction
pub(crate) fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the address, and reads
    // nothing the program sees; SSE, which it needs, is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
