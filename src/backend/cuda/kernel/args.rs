//! The parameter values of one kernel launch, packed one way for every kernel.
//!
//! The driver takes a launch's parameters as an array of pointers, one per parameter, each to
//! a value of the parameter's declared size; it copies them when the launch is queued. A
//! `KernelArgs` keeps every value in its own run of 8-byte words (so any value, from an `i32`
//! to an 80-byte struct, is stored whole and 8-byte aligned) and hands out the pointers once
//! all values are in, so no pointer can outlive a reallocation. Every byte of the words is
//! initialised, so a launch's values can be kept and compared with another's (a launch held
//! back for a graph, `replay.rs`).

use std::ffi::c_void;
use std::mem::size_of;

/// A value that can be passed to a kernel by value: plain data with the layout of the C type
/// the kernel declares (a primitive, an array of them, or a `#[repr(C)]` struct of them).
///
/// # Safety
///
/// Every byte of a value is initialised: the type has no padding (a `#[repr(C)]` struct
/// spells its padding out as fields), so its bytes can be copied into and compared as words.
pub(crate) unsafe trait KernelParam: Copy + 'static {}

macro_rules! kernel_params {
    // SAFETY: primitives have no padding.
    ($($t:ty),*) => { $(unsafe impl KernelParam for $t {})* };
}
kernel_params!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);
// SAFETY: an array of values without padding has none.
unsafe impl<T: KernelParam, const N: usize> KernelParam for [T; N] {}

/// The parameter values of a launch, in the kernel's order.
///
/// ```ignore
/// let mut args = KernelArgs::new();
/// args.u64(input_ptr).u64(output_ptr).i64(n as i64);
/// unsafe { kernel.launch(dev, grid, block, 0, &mut args) }?;
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct KernelArgs {
    words: Vec<u64>,
    /// Where each value starts in `words`.
    starts: Vec<usize>,
}

impl KernelArgs {
    /// No values yet.
    pub(crate) fn new() -> KernelArgs {
        KernelArgs::default()
    }

    /// Room for `n` values of up to 8 bytes without reallocating.
    pub(crate) fn with_capacity(n: usize) -> KernelArgs {
        KernelArgs { words: Vec::with_capacity(n), starts: Vec::with_capacity(n) }
    }

    /// How many values have been added.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether no value has been added.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Adds a value of any parameter type (a `#[repr(C)]` argument struct, say).
    pub(crate) fn value<T: KernelParam>(&mut self, v: T) -> &mut Self {
        let start = self.reserve(size_of::<T>());
        // SAFETY: `reserve` made `size_of::<T>()` bytes (rounded up to whole words) from word
        // `start` part of `words`; the write is unaligned-safe and copies `T`'s bytes, every
        // one initialised (`KernelParam`'s contract), so the words stay initialised.
        unsafe { (self.words.as_mut_ptr().add(start) as *mut T).write_unaligned(v) };
        self
    }

    /// Adds a value given as its bytes (a scalar whose type is known only at run time).
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        let start = self.reserve(b.len());
        // SAFETY: `reserve` made `b.len()` bytes from word `start` part of `words`, and `b`
        // cannot overlap storage this value owns.
        unsafe {
            std::ptr::copy_nonoverlapping(
                b.as_ptr(),
                self.words.as_mut_ptr().add(start) as *mut u8,
                b.len(),
            )
        };
        self
    }

    /// Adds a `u64` (a size, or a device address).
    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.value(v)
    }

    /// Adds an `i64`.
    pub(crate) fn i64(&mut self, v: i64) -> &mut Self {
        self.value(v)
    }

    /// Adds a `u32`.
    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.value(v)
    }

    /// Adds an `i32`.
    pub(crate) fn i32(&mut self, v: i32) -> &mut Self {
        self.value(v)
    }

    /// Adds an `f64`.
    pub(crate) fn f64(&mut self, v: f64) -> &mut Self {
        self.value(v)
    }

    /// Appends whole zeroed words for a value of `bytes` bytes (at least one word, so that
    /// every value has its own address) and returns the first word's index.
    fn reserve(&mut self, bytes: usize) -> usize {
        let start = self.words.len();
        let n = bytes.div_ceil(8).max(1);
        self.words.resize(start + n, 0);
        self.starts.push(start);
        start
    }

    /// One pointer per value, in order, as the driver's launch takes them. They point into
    /// `self` and are valid until it is next changed or dropped.
    pub(crate) fn pointers(&mut self) -> Vec<*mut c_void> {
        let base = self.words.as_mut_ptr();
        // SAFETY: every start is an index into `words` (see `reserve`).
        self.starts.iter().map(|&s| unsafe { base.add(s) } as *mut c_void).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Pair {
        a: u32,
        pad: u32,
        b: u64,
    }
    // SAFETY: the padding is a field: every byte is initialised.
    unsafe impl KernelParam for Pair {}

    /// Reads `size` bytes at a pointer `pointers` gave.
    fn read(p: *mut c_void, size: usize) -> Vec<u8> {
        // SAFETY: the tests read only as many bytes as the value at `p` was given.
        unsafe { std::slice::from_raw_parts(p as *const u8, size) }.to_vec()
    }

    #[test]
    fn every_value_is_stored_whole_in_order() {
        let mut args = KernelArgs::with_capacity(2);
        args.u64(0x1122_3344_5566_7788).i32(-5).bytes(&[9u8; 16]).f64(1.5);
        args.value([7u32; 20]).value(Pair { a: 3, pad: 0, b: 4 }).u32(6);
        assert_eq!(args.len(), 7);
        let p = args.pointers();
        assert_eq!(read(p[0], 8), 0x1122_3344_5566_7788u64.to_ne_bytes());
        assert_eq!(read(p[1], 4), (-5i32).to_ne_bytes());
        assert_eq!(read(p[2], 16), [9u8; 16]);
        assert_eq!(read(p[3], 8), 1.5f64.to_ne_bytes());
        assert_eq!(
            read(p[4], 80),
            [7u32; 20].iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<_>>()
        );
        assert_eq!(read(p[5], 4), 3u32.to_ne_bytes());
        assert_eq!(read((p[5] as *mut u8).wrapping_add(8) as *mut c_void, 8), 4u64.to_ne_bytes());
        assert_eq!(read(p[6], 4), 6u32.to_ne_bytes());
        // Each value is 8-byte aligned and none overlaps the next.
        for w in p.windows(2) {
            assert_eq!(w[0] as usize % 8, 0);
            assert!(w[1] as usize > w[0] as usize);
        }
    }

    #[test]
    fn an_empty_value_still_has_its_own_address() {
        let mut args = KernelArgs::new();
        assert!(args.is_empty());
        args.bytes(&[]).u32(1);
        let p = args.pointers();
        assert_ne!(p[0], p[1]);
    }
}
