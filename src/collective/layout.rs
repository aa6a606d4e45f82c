//! The shapes of gathered and scattered arrays.
//!
//! NCCL moves flat buffers: an all-gather places rank `r`'s elements after rank `r - 1`'s, and
//! a reduce-scatter gives rank `r` the `r`-th equal run of the flat result. In column-major
//! order the outermost dimension is the one whose runs are contiguous, so a gather stacks the
//! ranks' arrays along the dimension after their last non-unit one, and a scatter splits along
//! the last non-unit one.

use crate::dim4::Dim4;
use crate::error::{Error, Result};

/// The dimension that holds the rank in an all-gather of arrays of shape `dims`: the one after
/// the last dimension longer than 1 (dimension 3 itself when all four are used).
pub(crate) fn gather_dim(dims: Dim4) -> usize {
    let d = dims.get();
    match d.iter().rposition(|&n| n != 1) {
        Some(3) => 3,
        Some(i) => i + 1,
        None => 0,
    }
}

/// The shape of an all-gather of `world` arrays of shape `dims`.
pub(crate) fn gathered(dims: Dim4, world: usize) -> Dim4 {
    let mut d = *dims.get();
    let k = gather_dim(dims);
    d[k] *= world as u64;
    Dim4::new(&d)
}

/// The dimension a reduce-scatter splits: the last one longer than 1 (0 if none is).
pub(crate) fn scatter_dim(dims: Dim4) -> usize {
    dims.get().iter().rposition(|&n| n != 1).unwrap_or(0)
}

/// The shape of one rank's part of a reduce-scatter of arrays of shape `dims` over `world`
/// ranks; an error (naming `func`) unless that dimension divides evenly.
pub(crate) fn scattered(func: &str, dims: Dim4, world: usize) -> Result<Dim4> {
    let mut d = *dims.get();
    let k = scatter_dim(dims);
    if !d[k].is_multiple_of(world as u64) {
        return Err(Error::Collective(format!(
            "{func}: dimension {k} of the arrays ({dims}) does not divide into {world} equal \
             parts, one per rank"
        )));
    }
    d[k] /= world as u64;
    Ok(Dim4::new(&d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dim4;

    #[test]
    fn gathers_stack_after_the_last_used_dimension() {
        assert_eq!(gathered(dim4!(5), 3), dim4!(5, 3));
        assert_eq!(gathered(dim4!(5, 2), 3), dim4!(5, 2, 3));
        assert_eq!(gathered(dim4!(1), 4), dim4!(4));
        assert_eq!(gathered(dim4!(2, 1, 3), 2), dim4!(2, 1, 3, 2));
        assert_eq!(gathered(dim4!(2, 2, 2, 2), 2), dim4!(2, 2, 2, 4));
    }

    #[test]
    fn scatters_split_the_last_used_dimension() {
        assert_eq!(scattered("t", dim4!(6), 3), Ok(dim4!(2)));
        assert_eq!(scattered("t", dim4!(5, 4), 2), Ok(dim4!(5, 2)));
        assert_eq!(scattered("t", dim4!(1), 1), Ok(dim4!(1)));
    }

    #[test]
    fn an_uneven_scatter_is_refused() {
        let e = scattered("t", dim4!(6), 4).unwrap_err();
        assert!(e.to_string().contains("does not divide into 4 equal parts"), "{e}");
    }
}
