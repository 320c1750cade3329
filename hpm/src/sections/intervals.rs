//! Finite unions of half-open time intervals: the definition of exclusive
//! values in seed §3.6.3 ("the difference of the parent set with the union of
//! the child sets"). The session computes the same thing online; this type is
//! the reference it is tested against, and a utility for post-processing.

/// A union of disjoint, sorted, non-empty half-open intervals `[start, end)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntervalSet {
    spans: Vec<(u64, u64)>,
}

impl IntervalSet {
    /// The empty set.
    pub fn new() -> IntervalSet {
        IntervalSet::default()
    }

    /// Adds `[start, end)` (ignored when empty), merging overlaps.
    pub fn add(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let (mut s, mut e) = (start, end);
        let mut out = Vec::with_capacity(self.spans.len() + 1);
        let mut placed = false;
        for &(a, b) in &self.spans {
            if b < s {
                out.push((a, b));
            } else if e < a {
                if !placed {
                    out.push((s, e));
                    placed = true;
                }
                out.push((a, b));
            } else {
                s = s.min(a);
                e = e.max(b);
            }
        }
        if !placed {
            out.push((s, e));
        }
        self.spans = out;
    }

    /// Union with another set.
    pub fn union(&self, other: &IntervalSet) -> IntervalSet {
        let mut r = self.clone();
        for &(a, b) in &other.spans {
            r.add(a, b);
        }
        r
    }

    /// `self \ other`.
    pub fn difference(&self, other: &IntervalSet) -> IntervalSet {
        let mut out = Vec::new();
        for &(a, b) in &self.spans {
            let mut cur = a;
            for &(c, d) in &other.spans {
                if d <= cur || c >= b {
                    continue;
                }
                if c > cur {
                    out.push((cur, c));
                }
                cur = cur.max(d);
                if cur >= b {
                    break;
                }
            }
            if cur < b {
                out.push((cur, b));
            }
        }
        IntervalSet { spans: out }
    }

    /// `self ∩ other`.
    pub fn intersection(&self, other: &IntervalSet) -> IntervalSet {
        self.difference(&self.difference(other))
    }

    /// Total length.
    pub fn measure(&self) -> u64 {
        self.spans.iter().map(|(a, b)| b - a).sum()
    }

    /// The disjoint intervals, sorted.
    pub fn spans(&self) -> &[(u64, u64)] {
        &self.spans
    }

    /// Sum of `f(a, b)` over the intervals: the "counter value over the set"
    /// for a cumulative counter `f(b) - f(a)`.
    pub fn integrate(&self, cumulative: impl Fn(u64) -> f64) -> f64 {
        self.spans
            .iter()
            .map(|&(a, b)| cumulative(b) - cumulative(a))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(iv: &[(u64, u64)]) -> IntervalSet {
        let mut s = IntervalSet::new();
        for &(a, b) in iv {
            s.add(a, b);
        }
        s
    }

    #[test]
    fn add_merges_and_sorts() {
        let s = set(&[(10, 20), (0, 5), (15, 30), (30, 31), (40, 40)]);
        assert_eq!(s.spans(), &[(0, 5), (10, 31)]);
        assert_eq!(s.measure(), 26);
    }

    #[test]
    fn nested_children() {
        // §3.1: parent [0,100), child [20,60): exclusive = 60
        let p = set(&[(0, 100)]);
        let c = set(&[(20, 60)]);
        assert_eq!(p.difference(&c).spans(), &[(0, 20), (60, 100)]);
        assert_eq!(p.difference(&c).measure(), 60);
    }

    #[test]
    fn overlapping_children_are_removed_once() {
        // §3.6.3: union of the child sets, then the difference
        let p = set(&[(0, 100)]);
        let children = set(&[(10, 50)]).union(&set(&[(30, 70)]));
        assert_eq!(children.spans(), &[(10, 70)]);
        assert_eq!(p.difference(&children).measure(), 40);
    }

    #[test]
    fn children_outside_the_parent_do_not_matter() {
        let p = set(&[(0, 10), (20, 30)]);
        let c = set(&[(5, 25), (40, 50)]);
        assert_eq!(p.difference(&c).spans(), &[(0, 5), (25, 30)]);
        assert_eq!(p.intersection(&c).spans(), &[(5, 10), (20, 25)]);
    }

    #[test]
    fn repeated_parent_intervals() {
        let p = set(&[(0, 10), (20, 30), (40, 50)]);
        let c = set(&[(2, 3), (20, 30), (45, 60)]);
        // 9 from the first interval, none from the second, 5 from the third
        assert_eq!(p.difference(&c).measure(), 14);
    }

    #[test]
    fn counter_values_over_the_exclusive_set() {
        // a counter that grows 2 per unit until 50, then 5 per unit
        let f = |t: u64| {
            if t <= 50 {
                2.0 * t as f64
            } else {
                100.0 + 5.0 * (t - 50) as f64
            }
        };
        let ex = set(&[(0, 100)]).difference(&set(&[(40, 60)]));
        assert_eq!(ex.integrate(f), 80.0 + 200.0);
    }
}
