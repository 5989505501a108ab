//! Byte tricks on up to sixteen bytes at once: packing them into a `u128` and finding a byte
//! among them, with one SSE2 compare on `x86_64` (part of its baseline) and SWAR elsewhere. The
//! topic tokenizer and the CS-trie's narrow levels use them.

/// The bytes of a word of at most 16 bytes as a little-endian integer, zero above them: loads
/// of whole words (two overlapping ones for the tail) rather than a byte copy.
#[inline]
pub(crate) fn pack(bytes: &[u8]) -> u128 {
    let len = bytes.len();
    if len < 8 {
        return u128::from(pack_u64(bytes));
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    // The tail load ends at `len`; shifting drops the bytes the first load has.
    let high = word(len - 8)
        .checked_shr(((16 - len) * 8) as u32)
        .unwrap_or(0);
    u128::from(word(0)) | (u128::from(high) << 64)
}

/// [`pack`] of at most 8 bytes, into a `u64`.
#[inline]
pub(crate) fn pack_u64(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    debug_assert!(len <= 8);
    let half = |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4")));
    if len >= 8 {
        u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
    } else if len >= 4 {
        let high = half(len - 4) >> ((8 - len) * 8);
        half(0) | (high << 32)
    } else if len > 0 {
        // One to three bytes: the first, the middle and the last (some the same byte) cover
        // them all without a loop.
        let at = |i: usize| u64::from(bytes[i]) << (8 * i);
        at(0) | at(len / 2) | at(len - 1)
    } else {
        0
    }
}

/// The positions of `byte` among `bytes` as bits (bit `i` set if `bytes[i] == byte`): one SSE2
/// compare, for the CS-trie's narrow levels' tags (other targets use [`swar_positions`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::inline_always)] // a handful of instructions in the lookup's inner loop
pub(crate) fn positions_of(bytes: &[u8; 16], byte: u8) -> u32 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    #[allow(clippy::cast_possible_wrap, clippy::cast_sign_loss)] // bit patterns, not numbers
    // SAFETY: SSE2 is part of the x86_64 baseline, so the intrinsics' target feature is present
    // on every CPU this code runs on; the unaligned load reads exactly the 16 bytes of `bytes`,
    // a live reference.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8))) as u32
    }
}

/// [`positions_of`] for sixteen bytes held in a `u128` (little-endian): no round trip through
/// memory, whose 16-byte load after two 8-byte stores the CPU could not forward.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::inline_always)] // a handful of instructions in the lookup's front end
pub(crate) fn positions_in(bytes: u128, byte: u8) -> u32 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set_epi64x};
    #[allow(clippy::cast_possible_wrap, clippy::cast_sign_loss)] // bit patterns, not numbers
    // SAFETY: SSE2 is part of the x86_64 baseline, so the intrinsics' target feature is present
    // on every CPU this code runs on; no memory is read.
    unsafe {
        let v = _mm_set_epi64x((bytes >> 64) as i64, bytes as i64);
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(byte as i8))) as u32
    }
}

/// The positions of `byte` among `bytes` as bits, without SIMD: the exact zero-byte test of
/// `bytes ^ byte` over the 16 bytes at once (no false positives), its byte flags gathered
/// into bits. (Compiled on `x86_64` too, where a test checks it against SSE2.)
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
#[inline(always)]
#[allow(clippy::inline_always)] // part of the lookup's inner loop
pub(crate) fn swar_positions(bytes: &[u8; 16], byte: u8) -> u32 {
    const ONES: u128 = u128::MAX / 0xFF;
    const LOW7: u128 = ONES * 0x7F;
    let x = u128::from_le_bytes(*bytes) ^ (ONES * u128::from(byte));
    let mut zero = !(((x & LOW7) + LOW7) | x | LOW7);
    let mut bits = 0;
    while zero != 0 {
        bits |= 1 << (zero.trailing_zeros() / 8);
        zero &= zero - 1;
    }
    bits
}
