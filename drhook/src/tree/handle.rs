//! Handles: how foreign callers (C, Fortran) name an activation between
//! enter and exit.
//!
//! A handle encodes what exit needs to check — thread, depth and node index
//! — never a pointer, so a corrupted handle can only fail the comparison with
//! the top of the thread's stack; it is never dereferenced. The bit layouts
//! keep the two top bits clear, so the 8-byte handle read as a Fortran
//! `REAL(8)` (and the 4-byte one as a `REAL(4)`) is always a finite positive
//! number: copying it through floating-point registers cannot change it.
//! 0 means "nothing was entered" (Dr.Hook off).

/// 64-bit layout: bits 0..32 node index, 32..48 depth (mod 2^16),
/// 48..62 thread number (mod 2^14), 62..64 zero.
pub fn encode64(tid: u32, depth: u32, index: u32) -> u64 {
    ((tid as u64 & 0x3FFF) << 48) | ((depth as u64 & 0xFFFF) << 32) | index as u64
}

/// Inverse of [`encode64`]: (thread mod 2^14, depth mod 2^16, index).
pub fn decode64(h: u64) -> (u32, u32, u32) {
    (
        ((h >> 48) & 0x3FFF) as u32,
        ((h >> 32) & 0xFFFF) as u32,
        h as u32,
    )
}

/// Whether a 64-bit handle designates (tid, depth, index).
pub fn matches64(h: u64, tid: u32, depth: u32, index: u32) -> bool {
    h != 0 && h == encode64(tid, depth, index)
}

/// 32-bit layout (4-byte `REAL` handles): bits 0..16 node index (mod 2^16),
/// 16..30 depth (mod 2^14), 30..32 zero. No room for the thread.
pub fn encode32(depth: u32, index: u32) -> u32 {
    ((depth & 0x3FFF) << 16) | (index & 0xFFFF)
}

/// Whether a 32-bit handle designates (depth, index).
pub fn matches32(h: u32, depth: u32, index: u32) -> bool {
    h != 0 && h == encode32(depth, index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_float_safety() {
        for (tid, depth, index) in [
            (1, 1, 1),
            (2, 10_000, 123_456),
            (16_383, 65_535, u32::MAX),
            (70_000, 70_000, 7),
        ] {
            let h = encode64(tid, depth, index);
            assert_eq!(decode64(h), (tid & 0x3FFF, depth & 0xFFFF, index));
            assert!(matches64(h, tid, depth, index));
            assert!(!matches64(h, tid + 1, depth, index));
            assert!(!matches64(h, tid, depth + 1, index));
            let f = f64::from_bits(h);
            assert!(f.is_finite() && f >= 0.0, "{f}");
            assert_eq!(f.to_bits(), h);
            let h32 = encode32(depth, index);
            let g = f32::from_bits(h32);
            assert!(g.is_finite() && g >= 0.0);
            assert!(matches32(h32, depth, index));
        }
        assert!(!matches64(0, 0, 0, 0), "0 is never a valid handle");
        assert!(!matches32(0, 0, 0));
    }
}
