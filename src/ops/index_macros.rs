//! The indexing macros of arrayfire-rust, with its grammar: `seq!`, `view!`, and `eval!` (both
//! its forms: evaluating arrays, and assigning into an indexed array).

/// A [`Seq`](crate::Seq): `seq!()` spans a whole dimension; `seq!(begin:end:step)` with
/// literals, or `seq!(begin, end, step)` with expressions, is a `Seq<i32>`; a leading
/// `type;` picks another element type (`seq!(f32; 0.0:9.0:1.5)`).
///
/// ```
/// use emberfire::{seq, Seq};
/// assert_eq!(seq!(), Seq::<i32>::default());
/// assert_eq!(seq!(1:5:2), Seq::new(1, 5, 2));
/// assert_eq!(seq!(-1:0:-1), Seq::new(-1, 0, -1));
/// let n = 4;
/// assert_eq!(seq!(0, n - 1, 1), Seq::new(0, 3, 1));
/// assert_eq!(seq!(f64; 0.0:2.0:1.0), Seq::new(0.0, 2.0, 1.0));
/// assert_eq!(seq!(u32; 2, 3, 1), Seq::new(2u32, 3, 1));
/// ```
#[macro_export]
macro_rules! seq {
    () => {
        $crate::Seq::<i32>::default()
    };
    ($sty:ty; $start:literal : $end:literal : $step:literal) => {
        $crate::Seq::<$sty>::new($start, $end, $step)
    };
    ($start:literal : $end:literal : $step:literal) => {
        $crate::Seq::<i32>::new($start, $end, $step)
    };
    ($sty:ty; $start:expr , $end:expr , $step:expr) => {
        $crate::Seq::<$sty>::new($start, $end, $step)
    };
    ($start:expr , $end:expr , $step:expr) => {
        $crate::Seq::<i32>::new($start, $end, $step)
    };
}

/// Indexes an array: `view!(a)` is a shallow clone; `view!(a[b:e:s, ...])` with literal
/// sequences is [`index`](crate::index); `view!(a[x, y, ...])` with any mix of
/// [`Seq`](crate::Seq) and index [`Array`](crate::Array) variables (one per dimension, from the
/// first) is [`index_gen`](crate::index_gen). The array is borrowed, not moved.
///
/// ```
/// use emberfire::{Array, dim4, seq, view};
/// let a = Array::new(&[0, 1, 2, 3, 4, 5, 6, 7, 8], dim4!(3, 3));
/// assert_eq!(view!(a[1:2:1, 1:1:0]).to_vec(), vec![1, 2, 4, 5, 7, 8]); // 1:1:0 spans
/// let rows = Array::new(&[2u32, 0], dim4!(2));
/// let last = seq!(-1:-1:1);
/// assert_eq!(view!(a[rows, last]).to_vec(), vec![8, 6]);
/// ```
#[macro_export]
macro_rules! view {
    (@af_max_dims) => {
        4
    };
    ( $array_ident:ident ) => {
        $array_ident.clone()
    };
    ( $array_ident:ident [ $($start:literal : $end:literal : $step:literal),+ ] ) => {
        {
            let mut seq_vec = Vec::<$crate::Seq<i32>>::with_capacity($crate::view!(@af_max_dims));
            $(
                seq_vec.push($crate::seq!($start:$end:$step));
            )*
            $crate::index(&$array_ident, &seq_vec)
        }
    };
    (@set_indexer $idim:expr, $idxr:ident, $lterm:expr) => {
        {
            $idxr.set_index(&$lterm, $idim, None);
        }
    };
    (@set_indexer $idim:expr, $idxr:ident, $hterm:expr, $($tterm:expr),*) => {
        {
            $idxr.set_index(&$hterm, $idim, None);
            $crate::view!(@set_indexer $idim + 1, $idxr, $($tterm),*);
        }
    };
    ($array_ident:ident [ $($_e:expr),+ ]) => {
        {
            let mut idxrs = $crate::Indexer::default();
            $crate::view!(@set_indexer 0, idxrs, $($_e),*);
            $crate::index_gen(&$array_ident, idxrs)
        }
    };
}

/// Evaluates arrays, or assigns into part of an array.
///
/// - `eval!(&x, &y, ...)` evaluates the arrays together, as
///   [`eval_multiple`](crate::eval_multiple).
/// - `eval!(a[b:e:s, ...] = rhs)` with literal sequences, or `eval!(a[x, y, ...] = rhs)` with
///   [`Seq`](crate::Seq) and index [`Array`](crate::Array) variables, writes `rhs` into the
///   part of `a` selected, as [`assign_gen`](crate::assign_gen) (`a` must be mutable). `rhs`
///   may itself be indexed the same way: `eval!(a[x, y] = b[u, v])`.
///
/// ```
/// use emberfire::{Array, constant, dim4, eval, seq};
/// let mut a = constant(0.0f32, dim4!(3, 3));
/// let b = Array::new(&[1.0f32, 2.0, 3.0, 4.0], dim4!(2, 2));
/// eval!(a[0:1:1, 1:2:1] = b);
/// let (r, c) = (seq!(2:2:1), seq!(0:0:1));
/// let (s, t) = (seq!(1:1:1), seq!(1:1:1));
/// eval!(a[r, c] = b[s, t]); // a(2, 0) = b(1, 1)
/// assert_eq!(a.to_vec(), vec![0.0, 0.0, 4.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0]);
/// let (x, y) = (&a + 1.0f32, &a * 2.0f32);
/// eval!(&x, &y);
/// assert!(x.is_linear() && y.is_linear());
/// ```
#[macro_export]
macro_rules! eval {
    ( $l:ident [ $($lb:literal : $le:literal : $ls:literal),+ ] =
      $r:ident [ $($rb:literal : $re:literal : $rs:literal),+ ]) => {
        {
            let mut seq_vec = Vec::<$crate::Seq<i32>>::with_capacity($crate::view!(@af_max_dims));
            $(
                seq_vec.push($crate::seq!($lb:$le:$ls));
            )*
            let mut idxrs = $crate::Indexer::default();
            for i in 0..seq_vec.len() {
                idxrs.set_index(&seq_vec[i], i as u32, None);
            }
            let eq_rterm = $crate::view!($r[ $($rb:$re:$rs),+ ]);
            $crate::assign_gen(&mut $l, &idxrs, &eq_rterm);
        }
    };
    ( $l:ident [ $($lb:literal : $le:literal : $ls:literal),+ ] = $r:expr ) => {
        {
            let mut seq_vec = Vec::<$crate::Seq<i32>>::with_capacity($crate::view!(@af_max_dims));
            $(
                seq_vec.push($crate::seq!($lb:$le:$ls));
            )*
            let mut idxrs = $crate::Indexer::default();
            for i in 0..seq_vec.len() {
                idxrs.set_index(&seq_vec[i], i as u32, None);
            }
            $crate::assign_gen(&mut $l, &idxrs, &$r);
        }
    };
    ($lhs:ident [ $($lhs_e:expr),+ ] = $rhs:ident [ $($rhs_e:expr),+ ]) => {
        {
            let eq_rterm = $crate::view!($rhs[ $($rhs_e),+ ]);
            let mut idxrs = $crate::Indexer::default();
            $crate::view!(@set_indexer 0, idxrs, $($lhs_e),*);
            $crate::assign_gen(&mut $lhs, &idxrs, &eq_rterm);
        }
    };
    ($lhs:ident [ $($lhs_e:expr),+ ] = $rhs:expr) => {
        {
            let mut idxrs = $crate::Indexer::default();
            $crate::view!(@set_indexer 0, idxrs, $($lhs_e),*);
            $crate::assign_gen(&mut $lhs, &idxrs, &$rhs);
        }
    };
    [$($x:expr),+] => {
        {
            let mut temp_vec = Vec::new();
            $(
                temp_vec.push($x);
            )*
            $crate::eval_multiple(temp_vec)
        }
    };
}
