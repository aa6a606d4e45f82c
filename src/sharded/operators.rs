//! Arithmetic operators on sharded arrays: `+ - * /` between two sharded arrays of the same
//! layout (shard by shard, as [`ShardedArray::zip_with`]) and with a scalar on either side
//! (as [`ShardedArray::map`]). Like the operators on [`Array`], they are lazy: a chain of them
//! fuses into one kernel per shard when evaluated.

use std::ops::{Add, Div, Mul, Sub};

use super::ShardedArray;
use crate::array::Array;
use crate::dtype::{HasAfEnum, ImplicitPromote};

macro_rules! sharded_op {
    ($trait:ident, $method:ident) => {
        /// Shard by shard; panics as [`ShardedArray::zip_with`] does for arrays laid out
        /// differently.
        ///
        /// ```
        /// use emberfire::{dim4, ShardedArray};
        /// let x = ShardedArray::from_host(&[1.0f32, 2.0, 3.0], dim4!(3), &[0, 0], 0);
        /// let y = ShardedArray::from_host(&[4.0f32, 5.0, 6.0], dim4!(3), &[0, 0], 0);
        /// let _ = &x + &y;
        /// ```
        impl<A, B> $trait<&ShardedArray<B>> for &ShardedArray<A>
        where
            A: HasAfEnum + ImplicitPromote<B>,
            B: HasAfEnum + ImplicitPromote<A>,
        {
            type Output = ShardedArray<A::Output>;
            fn $method(self, rhs: &ShardedArray<B>) -> Self::Output {
                self.zip_with(rhs, |a: &Array<A>, b: &Array<B>| $trait::$method(a, b))
            }
        }
    };
}

sharded_op!(Add, add);
sharded_op!(Sub, sub);
sharded_op!(Mul, mul);
sharded_op!(Div, div);

macro_rules! sharded_scalar_op {
    ($($s:ty),*) => { $(
        sharded_scalar_op!(@one $s, Add, add);
        sharded_scalar_op!(@one $s, Sub, sub);
        sharded_scalar_op!(@one $s, Mul, mul);
        sharded_scalar_op!(@one $s, Div, div);
    )* };
    (@one $s:ty, $trait:ident, $method:ident) => {
        impl<T> $trait<$s> for &ShardedArray<T>
        where
            T: HasAfEnum + ImplicitPromote<$s>,
            $s: ImplicitPromote<T>,
        {
            type Output = ShardedArray<<T as ImplicitPromote<$s>>::Output>;
            fn $method(self, rhs: $s) -> Self::Output {
                self.map(|a: &Array<T>| $trait::$method(a, rhs))
            }
        }
        impl<T> $trait<&ShardedArray<T>> for $s
        where
            T: HasAfEnum + ImplicitPromote<$s>,
            $s: ImplicitPromote<T>,
        {
            type Output = ShardedArray<<$s as ImplicitPromote<T>>::Output>;
            fn $method(self, rhs: &ShardedArray<T>) -> Self::Output {
                rhs.map(|a: &Array<T>| $trait::$method(self, a))
            }
        }
    };
}

sharded_scalar_op!(f32, f64, i32, i64, u8, u32, u64);

#[cfg(test)]
mod tests {
    use crate::{dim4, ShardedArray};

    #[test]
    fn operators_work_shard_by_shard_and_with_scalars_on_either_side() {
        let v: Vec<f64> = (0..7).map(|i| i as f64 * 0.5).collect();
        let w: Vec<f64> = (0..7).map(|i| 10.0 - i as f64).collect();
        let x = ShardedArray::from_host(&v, dim4!(7), &[0, 0, 0], 0);
        let y = ShardedArray::from_host(&w, dim4!(7), &[0, 0, 0], 0);
        let got: Vec<f64> = (&(&(&x + &y) * 2.0f64) - &(1.0f64 / &y)).to_vec();
        for i in 0..7 {
            let want = (v[i] + w[i]) * 2.0 - 1.0 / w[i];
            assert!((got[i] - want).abs() < 1e-12, "{i}: {} vs {want}", got[i]);
        }
        let d: Vec<f64> = (&(&x / &y) - &(3.0f64 - &x)).to_vec();
        for i in 0..7 {
            let want = v[i] / w[i] - (3.0 - v[i]);
            assert!((d[i] - want).abs() < 1e-12);
        }
    }
}
