//! Checking a sparse matrix's parts before any kernel reads them: lengths that fit the format,
//! offsets that start at 0, never decrease and end at `nnz`, and indices inside the matrix.
//! A failure panics with a message naming the function and the argument, as every programmer
//! error in emberfire does; nothing invalid ever reaches a kernel.

use super::SparseFormat;
use crate::array::Array;
use crate::ops::reduce::{max_all, min_all};
use crate::ops::scan::diff1;

/// What `row_indices` and `col_indices` hold in `format`: offsets (with the count of rows or
/// columns they compress) or indices (with the bound they must stay below).
#[derive(Clone, Copy)]
enum Part {
    Offsets { count: u64 },
    Indices { bound: u64 },
}

fn parts(func: &str, format: SparseFormat, rows: u64, cols: u64) -> [Part; 2] {
    match format {
        SparseFormat::CSR => [Part::Offsets { count: rows }, Part::Indices { bound: cols }],
        SparseFormat::CSC => [Part::Indices { bound: rows }, Part::Offsets { count: cols }],
        SparseFormat::COO => [Part::Indices { bound: rows }, Part::Indices { bound: cols }],
        SparseFormat::DENSE => {
            panic!("{func}: `format` DENSE is not a sparse format (use CSR, CSC or COO)")
        }
    }
}

const NAMES: [&str; 2] = ["row_indices", "col_indices"];

/// Checks the sizes: the matrix and `nnz` fit i32 indices, and each index array has the length
/// its format needs.
pub(crate) fn lengths(func: &str, format: SparseFormat, shape: (u64, u64), lens: [u64; 3]) {
    let (rows, cols) = shape;
    let [nnz, nr, nc] = lens;
    let limit = i32::MAX as u64;
    assert!(
        rows <= limit && cols <= limit && nnz <= limit,
        "{func}: a {rows} x {cols} matrix with {nnz} values does not fit i32 indices"
    );
    for ((part, len), name) in parts(func, format, rows, cols).into_iter().zip([nr, nc]).zip(NAMES)
    {
        let (want, what) = match part {
            Part::Offsets { count } => (count + 1, "offsets (one more than the count)"),
            Part::Indices { .. } => (nnz, "indices (one per value)"),
        };
        assert!(
            len == want,
            "{func}: `{name}` has {len} elements, but {format:?} needs {want} {what} for a \
             {rows} x {cols} matrix with {nnz} values"
        );
    }
}

/// Checks the contents of host index arrays.
pub(crate) fn host(
    func: &str,
    format: SparseFormat,
    shape: (u64, u64),
    nnz: u64,
    index_parts: [&[i32]; 2],
) {
    let kinds = parts(func, format, shape.0, shape.1);
    for ((part, v), name) in kinds.into_iter().zip(index_parts).zip(NAMES) {
        match part {
            Part::Offsets { .. } => {
                let bad_start = v.first().is_some_and(|&s| s != 0);
                let bad_end = v.last().is_some_and(|&e| e as i64 != nnz as i64);
                assert!(
                    !bad_start && !bad_end,
                    "{func}: offsets `{name}` must start at 0 and end at nnz = {nnz} (they run \
                     from {:?} to {:?})",
                    v.first(),
                    v.last()
                );
                if let Some(j) = v.windows(2).position(|w| w[1] < w[0]) {
                    panic!(
                        "{func}: offsets `{name}` decrease at position {}: {} after {}",
                        j + 1,
                        v[j + 1],
                        v[j]
                    );
                }
            }
            Part::Indices { bound } => {
                if let Some(j) = v.iter().position(|&x| x < 0 || x as u64 >= bound) {
                    panic!("{func}: `{name}` holds {} at position {j}, outside [0, {bound})", v[j]);
                }
            }
        }
    }
}

/// Checks the contents of index arrays on their backend, by reductions (a few scalar reads).
pub(crate) fn device(
    func: &str,
    format: SparseFormat,
    shape: (u64, u64),
    nnz: u64,
    index_parts: [&Array<i32>; 2],
) {
    let kinds = parts(func, format, shape.0, shape.1);
    for ((part, v), name) in kinds.into_iter().zip(index_parts).zip(NAMES) {
        if v.elements() == 0 {
            continue;
        }
        let (lo, hi) = (min_all(v).0 as i64, max_all(v).0 as i64);
        match part {
            Part::Offsets { .. } => {
                let falls = v.elements() > 1 && min_all(&diff1(v, 0)).0 < 0;
                assert!(!falls, "{func}: offsets `{name}` decrease somewhere; they must not");
                // never decreasing, so the first is the least and the last the greatest
                assert!(
                    lo == 0 && hi == nnz as i64,
                    "{func}: offsets `{name}` must start at 0 and end at nnz = {nnz} (they run \
                     from {lo} to {hi})"
                );
            }
            Part::Indices { bound } => assert!(
                lo >= 0 && (hi as u64) < bound,
                "{func}: `{name}` holds values from {lo} to {hi}, outside [0, {bound})"
            ),
        }
    }
}
