//! The arithmetic of the wide accumulator types (f64, c64 and the 32- and 64-bit integers)
//! that the CPU reductions and scans compute in: one definition of the rules they share.

use crate::dtype::c64;

/// Addition, multiplication, minimum and maximum of an accumulator type, with its identities.
///
/// Integers wrap; floating minimum and maximum ignore NaN unless both operands are NaN;
/// complex values compare by magnitude, and on a tie `self` (the earlier value) wins.
pub(super) trait Arith: Copy + Send + Sync + 'static {
    const ZERO: Self;
    const ONE: Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// The smaller, with the rules above.
    fn min(self, o: Self) -> Self;
    /// The larger, with the rules above.
    fn max(self, o: Self) -> Self;
}

impl Arith for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    #[inline(always)]
    fn add(self, o: f64) -> f64 {
        self + o
    }
    #[inline(always)]
    fn mul(self, o: f64) -> f64 {
        self * o
    }
    #[inline(always)]
    fn min(self, o: f64) -> f64 {
        f64::min(self, o)
    }
    #[inline(always)]
    fn max(self, o: f64) -> f64 {
        f64::max(self, o)
    }
}

impl Arith for c64 {
    const ZERO: c64 = c64::new(0.0, 0.0);
    const ONE: c64 = c64::new(1.0, 0.0);
    #[inline(always)]
    fn add(self, o: c64) -> c64 {
        self + o
    }
    #[inline(always)]
    fn mul(self, o: c64) -> c64 {
        self * o
    }
    #[inline(always)]
    fn min(self, o: c64) -> c64 {
        if self.is_nan() || (!o.is_nan() && o.norm_sqr() < self.norm_sqr()) {
            o
        } else {
            self
        }
    }
    #[inline(always)]
    fn max(self, o: c64) -> c64 {
        if self.is_nan() || (!o.is_nan() && o.norm_sqr() > self.norm_sqr()) {
            o
        } else {
            self
        }
    }
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: $t = 0;
            const ONE: $t = 1;
            #[inline(always)]
            fn add(self, o: $t) -> $t {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn mul(self, o: $t) -> $t {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn min(self, o: $t) -> $t {
                Ord::min(self, o)
            }
            #[inline(always)]
            fn max(self, o: $t) -> $t {
                Ord::max(self, o)
            }
        }
    )*};
}
int_arith!(i32, u32, i64, u64);

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared rules: NaN ignored unless both are, magnitude order with the first winning a
    /// tie, integers wrapping.
    #[test]
    fn rules() {
        assert_eq!(Arith::min(f64::NAN, 2.0), 2.0);
        assert_eq!(Arith::max(3.0, f64::NAN), 3.0);
        assert!(Arith::min(f64::NAN, f64::NAN).is_nan());
        let (a, b) = (c64::new(3.0, 4.0), c64::new(-5.0, 0.0));
        assert_eq!(Arith::min(a, b), a);
        assert_eq!(Arith::max(b, a), b);
        assert_eq!(Arith::min(c64::new(f64::NAN, 0.0), b), b);
        assert_eq!(Arith::add(u32::MAX, 2), 1);
        assert_eq!(Arith::mul(i64::MAX, 2), -2);
        assert_eq!(<i32 as Arith>::ONE, 1);
    }
}
