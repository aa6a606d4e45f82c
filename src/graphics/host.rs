//! Reading arrays for drawing: whatever the backend, an array is brought to the host as `f64`
//! values (one cast and one copy), so the user copies nothing and every draw kind sees plain
//! numbers.

use crate::{Array, DType, HasAfEnum};

/// The elements of `a` as `f64`, column-major. Complex and sparse arrays cannot be drawn: a
/// panic names the method and the argument.
pub(super) fn values<T: HasAfEnum>(a: &Array<T>, method: &str, arg: &str) -> Vec<f64> {
    let dtype = T::get_af_dtype();
    assert!(
        !matches!(dtype, DType::C32 | DType::C64),
        "Window::{method}: {arg} is a complex array ({dtype:?}); draw its real part, imaginary \
         part or magnitude instead"
    );
    assert!(!a.is_sparse(), "Window::{method}: {arg} is sparse; draw a dense array");
    if a.elements() == 0 {
        return Vec::new();
    }
    a.cast::<f64>().to_vec()
}

/// Splits an `[n, k]` (or `[k, n]`) array of points into `k` coordinate vectors, `k` being 2
/// or 3 as `order` allows.
pub(super) fn points<T: HasAfEnum>(
    a: &Array<T>,
    orders: &[u64],
    method: &str,
    arg: &str,
) -> Vec<Vec<f64>> {
    let d = a.dims();
    let v = values(a, method, arg);
    assert!(
        d[2] == 1 && d[3] == 1,
        "Window::{method}: {arg} must be a matrix of points, got dims {d}"
    );
    if orders.contains(&d[1]) && !(orders.contains(&d[0]) && d[1] > d[0]) {
        // [n, k]: each column one coordinate.
        let n = d[0] as usize;
        (0..d[1] as usize).map(|k| v[k * n..(k + 1) * n].to_vec()).collect()
    } else if orders.contains(&d[0]) {
        // [k, n]: each column one point.
        let k = d[0] as usize;
        (0..k).map(|c| v.iter().skip(c).step_by(k).copied().collect()).collect()
    } else {
        panic!(
            "Window::{method}: {arg} must have dims [n, {o}] or [{o}, n] (one point per row or \
             column), got {d}",
            o = orders.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(" or ")
        )
    }
}

/// Checks that coordinate vectors have the same number of elements.
pub(super) fn same_len(method: &str, named: &[(&str, &[f64])]) {
    let n = named[0].1.len();
    for (name, v) in &named[1..] {
        assert!(
            v.len() == n,
            "Window::{method}: {} has {n} elements but {name} has {}; they must match",
            named[0].0,
            v.len()
        );
    }
}
