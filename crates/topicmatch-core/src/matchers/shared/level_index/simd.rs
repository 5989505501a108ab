//! The AND of two bitmap rows, 64-bit words at a time: AVX2 when the CPU has it (detected at
//! run time), a portable scalar loop otherwise. The only `unsafe` of the bitmap matchers.

/// `acc &= row` word by word over their common length; returns whether any bit of `acc`
/// (within that length) is still set. Picks AVX2 when the running CPU supports it.
#[inline]
pub fn and_into(acc: &mut [u64], row: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if acc.len() >= 8 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
            // `and_avx2` beyond its safe slice arguments.
            return unsafe { and_avx2(acc, row) };
        }
    }
    and_scalar(acc, row)
}

/// The portable path of [`and_into`].
#[inline]
pub fn and_scalar(acc: &mut [u64], row: &[u64]) -> bool {
    let mut any = 0;
    for (a, r) in acc.iter_mut().zip(row) {
        *a &= *r;
        any |= *a;
    }
    any != 0
}

/// The SIMD path of [`and_into`] when AVX2 is available, else the scalar one: for benchmarks
/// and tests that compare the two.
pub fn and_simd(acc: &mut [u64], row: &[u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 support was checked just above.
            return unsafe { and_avx2(acc, row) };
        }
    }
    and_scalar(acc, row)
}

/// Whether this CPU runs [`and_simd`] with AVX2.
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn and_avx2(acc: &mut [u64], row: &[u64]) -> bool {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_loadu_si256, _mm256_or_si256, _mm256_setzero_si256,
        _mm256_storeu_si256, _mm256_testz_si256,
    };
    let len = acc.len().min(row.len());
    let batches = len / 4;
    let a = acc.as_mut_ptr();
    let r = row.as_ptr();
    // `loadu`/`storeu` accept any alignment, so the casts below need none.
    #[allow(clippy::cast_ptr_alignment)]
    // SAFETY: AVX2 is available (this function's contract). Batch `b` reads and writes the
    // four u64 at `4 * b .. 4 * b + 4`, which lie below `len`, within both slices; unaligned
    // loads and stores (`loadu`/`storeu`) have no alignment requirement; `acc` is borrowed
    // mutably, so nothing else reads or writes it meanwhile.
    let any = unsafe {
        let mut any = _mm256_setzero_si256();
        for b in 0..batches {
            let pa = a.add(4 * b).cast::<__m256i>();
            let pr = r.add(4 * b).cast::<__m256i>();
            let v = _mm256_and_si256(_mm256_loadu_si256(pa), _mm256_loadu_si256(pr));
            _mm256_storeu_si256(pa, v);
            any = _mm256_or_si256(any, v);
        }
        _mm256_testz_si256(any, any) == 0
    };
    let tail = and_scalar(&mut acc[4 * batches..len], &row[4 * batches..len]);
    any || tail
}
