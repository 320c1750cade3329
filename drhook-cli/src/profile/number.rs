//! Numbers as profiles print them (`%.2f`, `%12.3f`, `%llu`), parsed fast.
//!
//! A merge of a thousand rank files parses millions of fixed-point
//! decimals; [`decimal`] reads `[-]digits[.digits]` with integer arithmetic
//! and one correctly rounded division (both operands exact), which gives
//! the same `f64` as `str::parse`. Anything else (exponents, `inf`, very
//! long mantissas) falls back to `str::parse`.

const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

/// Parses a decimal number; `None` if `s` is not one.
pub fn decimal(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        _ => (false, b),
    };
    let mut mant: u64 = 0;
    let mut ndig = 0usize;
    let mut frac = 0usize;
    let mut seen_dot = false;
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                mant = mant * 10 + u64::from(c - b'0');
                ndig += 1;
                if seen_dot {
                    frac += 1;
                }
                if ndig > 15 {
                    return slow(s);
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => return slow(s),
        }
    }
    if ndig == 0 {
        return None;
    }
    // Both exact: mant < 2^53 (15 digits), 10^frac exact for frac ≤ 18.
    let v = mant as f64 / POW10[frac];
    Some(if neg { -v } else { v })
}

fn slow(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Parses an unsigned integer (no sign, no grouping).
pub fn unsigned(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses a signed integer.
pub fn signed(s: &str) -> Option<i64> {
    let t = s.strip_prefix('-').unwrap_or(s);
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses a comma-grouped integer (`7,920,000`).
pub fn grouped(s: &str) -> Option<u64> {
    if s.is_empty() || s.starts_with(',') || s.ends_with(',') {
        return None;
    }
    let mut v: u64 = 0;
    for c in s.bytes() {
        match c {
            b'0'..=b'9' => v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?,
            b',' => {}
            _ => return None,
        }
    }
    Some(v)
}

/// `1234567` -> `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_match_the_standard_parser() {
        for s in [
            "0",
            "0.00",
            "1.5",
            "76.84",
            "0.153",
            "199.52",
            "-3.25",
            "123456789.123",
            "0.1",
            "0.3",
            "99.87",
            "1e3",
            "12345678901234567890.5",
        ] {
            assert_eq!(decimal(s), s.parse::<f64>().ok(), "{s}");
        }
        for s in ["", "-", ".", "1.2.3", "abc", "1,0", "nan", "inf"] {
            assert_eq!(decimal(s), None, "{s}");
        }
    }

    #[test]
    fn grouping_both_ways() {
        for n in [0u64, 7, 999, 1000, 20_000, 7_920_000, 51_606_977, u64::MAX] {
            assert_eq!(grouped(&group(n)), Some(n));
        }
        assert_eq!(grouped("1,,2"), Some(12));
        assert_eq!(grouped(",1"), None);
        assert_eq!(grouped("1a"), None);
        assert_eq!(grouped("99999999999999999999999"), None);
    }

    proptest::proptest! {
        #[test]
        fn fixed_point_round_trip(m in 0u64..10_000_000_000_000, frac in 0usize..6) {
            let v = m as f64 / 10f64.powi(frac as i32);
            let s = format!("{v:.frac$}");
            proptest::prop_assert_eq!(decimal(&s), s.parse::<f64>().ok());
        }
    }
}
