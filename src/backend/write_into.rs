//! Writing into memory that already exists: the backend primitive under assignment
//! (`assign_seq`, `set_row`, ...), and the layout checks every writer into an existing buffer
//! shares.
//!
//! [`WriteInto::run_into`] evaluates a program, like `Evaluate::run`, but instead of
//! returning new buffers it writes its one output through a strided view of a buffer the
//! caller owns: element `(i, j, k, l)` of the result goes to element
//! `offset + i*s0 + j*s1 + k*s2 + l*s3` of the buffer, and nothing else in the buffer changes.
//! Strides may be negative. Whatever the program computes (a copy of another array, a scalar,
//! a fused element-wise expression) is computed and written in one pass, with no temporary.
//!
//! How to use it (e.g. to build `join` or `pad`): allocate or obtain a buffer the program does
//! not read, then call `run_into` once per region. The `&mut Buffer` is the proof that nothing
//! else reads or writes the buffer while the kernel runs: a program holds an `Arc` to every
//! buffer it reads, so a buffer it reads can never be borrowed mutably. For an existing array,
//! `ops::assign::writable_buffer` gives that `&mut Buffer`, copying the array first when
//! another array, a lazy expression or the user could observe the write.

use super::Buffer;
use crate::dim4::Dim4;
use crate::dtype::DType;
use crate::error::Error;
use crate::jit::Program;

/// A strided view of a buffer that a program's output is written through.
#[derive(Debug)]
pub(crate) struct Dest<'a> {
    pub buf: &'a mut Buffer,
    /// Element offset of position (0, 0, 0, 0).
    pub offset: usize,
    /// Distance in elements between neighbours along each dimension (may be negative).
    pub strides: [i64; 4],
}

/// Writing into existing memory on one backend.
pub(crate) trait WriteInto {
    /// Evaluates `p`, which has exactly one output, and writes its `p.dims` elements through
    /// `dst`. Panics (an internal error) if the view reaches outside the buffer, maps two
    /// elements to one place, or has another element type than the output.
    fn run_into(&self, p: &Program, dst: Dest<'_>) -> Result<(), Error> {
        assert_eq!(p.outputs.len(), 1, "internal error: run_into needs a single output");
        let dtype = p.steps[p.outputs[0]].dtype;
        check_view("run_into", dst.buf, dtype, p.dims, dst.offset, dst.strides);
        if p.dims.elements() == 0 {
            return Ok(());
        }
        self.write_checked(p, dst)
    }

    /// The backend's part of [`WriteInto::run_into`], once the view is checked and the program
    /// has elements: `dst` is this backend's buffer.
    fn write_checked(&self, p: &Program, dst: Dest<'_>) -> Result<(), Error>;

    /// A new buffer for `elements` elements of `dtype` that the caller will overwrite
    /// entirely (with `run_into` or `index_copy`) before anything reads it: zeros on the CPU,
    /// uninitialised device memory on CUDA (no kernel is spent on clearing it).
    fn alloc_for_overwrite(&self, dtype: DType, elements: usize) -> Result<Buffer, Error>;
}

/// The number of elements of type `dtype` that `buf` holds.
pub(crate) fn buffer_elements(buf: &Buffer, dtype: DType) -> usize {
    match buf {
        Buffer::Host(h) => {
            assert_eq!(h.dtype(), dtype, "internal error: buffer holds another element type");
            h.len()
        }
        Buffer::Cuda(m) => m.len() / dtype.size(),
    }
}

/// The lowest and highest element offsets a strided view of shape `dims` touches (`None` when
/// it has no elements).
pub(crate) fn address_range(dims: Dim4, offset: usize, strides: [i64; 4]) -> Option<(i64, i64)> {
    if dims.elements() == 0 {
        return None;
    }
    let (mut lo, mut hi) = (offset as i64, offset as i64);
    for k in 0..4 {
        let reach = strides[k] * (dims[k] as i64 - 1);
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    Some((lo, hi))
}

/// True when no two positions of a strided view of shape `dims` share an address: sorted by
/// stride magnitude, each dimension's stride must pass everything the smaller ones reach.
pub(crate) fn is_one_to_one(dims: Dim4, strides: [i64; 4]) -> bool {
    if dims.elements() == 0 {
        return true;
    }
    let mut used: Vec<(u64, u64)> =
        (0..4).filter(|&k| dims[k] > 1).map(|k| (strides[k].unsigned_abs(), dims[k])).collect();
    used.sort_unstable();
    let mut reach = 0u64;
    for (s, n) in used {
        if s <= reach {
            return false;
        }
        reach += s * (n - 1);
    }
    true
}

/// Panics (an internal error naming `what`) unless the view lies inside `buf` and maps its
/// elements one-to-one.
pub(crate) fn check_view(
    what: &str,
    buf: &Buffer,
    dtype: DType,
    dims: Dim4,
    offset: usize,
    strides: [i64; 4],
) {
    check_bounds(what, buf, dtype, dims, offset, strides);
    assert!(
        is_one_to_one(dims, strides),
        "internal error: {what}: a view of dims {dims} with strides {strides:?} writes some \
         elements twice"
    );
}

/// Panics (an internal error naming `what`) unless every element of the view lies inside
/// `buf`.
pub(crate) fn check_bounds(
    what: &str,
    buf: &Buffer,
    dtype: DType,
    dims: Dim4,
    offset: usize,
    strides: [i64; 4],
) {
    let len = buffer_elements(buf, dtype) as i64;
    if let Some((lo, hi)) = address_range(dims, offset, strides) {
        assert!(
            lo >= 0 && hi < len,
            "internal error: {what}: a view of dims {dims}, offset {offset}, strides {strides:?} \
             reaches elements {lo}..={hi} of a buffer of {len}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_of_dense_buffers_are_one_to_one() {
        let d = Dim4::new(&[3, 4, 2, 1]);
        assert!(is_one_to_one(d, [1, 3, 12, 24]));
        // every other row, backwards: still one-to-one
        assert!(is_one_to_one(d, [-2, 6, 24, 48]));
        // dimension 1 overlaps dimension 0
        assert!(!is_one_to_one(d, [1, 2, 12, 24]));
        // broadcast (stride 0) writes one place several times
        assert!(!is_one_to_one(d, [0, 3, 12, 24]));
        // size-1 dimensions and empty views never collide
        assert!(is_one_to_one(Dim4::new(&[5, 1, 1, 1]), [1, 0, 0, 0]));
        assert!(is_one_to_one(Dim4::new(&[5, 0, 3, 1]), [0, 0, 0, 0]));
    }

    #[test]
    fn address_ranges_follow_negative_strides() {
        let d = Dim4::new(&[3, 2, 1, 1]);
        assert_eq!(address_range(d, 5, [-1, 3, 0, 0]), Some((3, 8)));
        assert_eq!(address_range(d, 0, [1, 3, 6, 6]), Some((0, 5)));
        assert_eq!(address_range(Dim4::new(&[0, 2, 1, 1]), 0, [1, 1, 1, 1]), None);
    }
}
