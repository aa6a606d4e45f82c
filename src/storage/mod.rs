//! Typed host storage behind a type-erased tag: `HostVec` holds a `Vec<T>` of any element type,
//! and `Element` links each Rust type to its variant. Casting between element types lives here
//! too, so both backends (and host reads) share one definition of what a cast means.
//!
//! A `bool` element is stored as a byte ([`BoolByte`]), as ArrayFire's `b8` is: it is true
//! when the byte is not zero, and operations that use its number (a cast to a numeric type,
//! arithmetic, a convolution of a bool signal, `sum`) use the byte's value, so a bool array can
//! hold neighbour counts. Results that are booleans (comparisons, logical operations, casts to
//! bool) are always 0 or 1. A Rust `bool` must be 0 or 1, so the bytes are normalised where
//! they become Rust `bool`s ([`Element`] for `bool`); inside the backends the element type of
//! `B8` is `BoolByte`, never `bool`.

use crate::dtype::{c32, c64, DType};
use crate::error::Error;
use half::{bf16, f16};

/// The stored form of a `bool` element: a byte that means *true* when it is not zero. Its value
/// is what a cast to a number reads (see the module documentation).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoolByte(pub u8);

impl BoolByte {
    /// The byte of a Rust `bool` (0 or 1).
    #[inline(always)]
    pub(crate) fn of(b: bool) -> BoolByte {
        BoolByte(b as u8)
    }
    /// Whether the byte means true (it is not zero).
    #[inline(always)]
    pub(crate) fn get(self) -> bool {
        self.0 != 0
    }
}

/// `BoolByte`s seen as their bytes (no copy).
pub(crate) fn bool_bytes(v: &[BoolByte]) -> &[u8] {
    // SAFETY: BoolByte is a transparent wrapper of u8, so the slices have the same layout.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len()) }
}

/// A vector of Rust `bool`s as stored bool bytes (no copy: a `bool` is a byte holding 0 or 1).
pub(crate) fn bools_to_bytes(v: Vec<bool>) -> Vec<BoolByte> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: bool and BoolByte have size and alignment 1, every bool is a valid BoolByte, and
    // the allocation is handed over whole (pointer, length and capacity), never freed twice.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut BoolByte, v.len(), v.capacity()) }
}

/// A vector of bytes as stored bool bytes, keeping their values (no copy).
pub(crate) fn u8_to_bool_bytes(v: Vec<u8>) -> Vec<BoolByte> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: BoolByte is a transparent wrapper of u8; the allocation is handed over whole.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut BoolByte, v.len(), v.capacity()) }
}

/// Stored bool bytes as Rust `bool`s, normalising every byte that is not zero to `true` in
/// place first (no new allocation).
pub(crate) fn bytes_to_bools(v: Vec<BoolByte>) -> Vec<bool> {
    let mut v = std::mem::ManuallyDrop::new(v);
    for b in v.iter_mut() {
        b.0 = (b.0 != 0) as u8;
    }
    // SAFETY: every byte is now 0 or 1, a valid bool; size and alignment are 1 for both types,
    // and the allocation is handed over whole.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut bool, v.len(), v.capacity()) }
}

/// A vector of elements of one of the fourteen element types.
#[derive(Clone, Debug, PartialEq)]
pub enum HostVec {
    F32(Vec<f32>),
    C32(Vec<c32>),
    F64(Vec<f64>),
    C64(Vec<c64>),
    B8(Vec<BoolByte>),
    S32(Vec<i32>),
    U32(Vec<u32>),
    U8(Vec<u8>),
    S64(Vec<i64>),
    U64(Vec<u64>),
    S16(Vec<i16>),
    U16(Vec<u16>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
}

/// Runs `$body` with `$v` bound to the typed vector inside a `HostVec` (by value, reference or
/// mutable reference, following how `$hv` is given) and the element type available as `$T`.
macro_rules! with_vec {
    ($hv:expr, $v:ident, $T:ident => $body:expr) => {{
        #[allow(unused_imports)]
        use $crate::storage::HostVec as __H;
        match $hv {
            __H::F32($v) => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            __H::C32($v) => {
                #[allow(dead_code)]
                type $T = $crate::dtype::c32;
                $body
            }
            __H::F64($v) => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
            __H::C64($v) => {
                #[allow(dead_code)]
                type $T = $crate::dtype::c64;
                $body
            }
            __H::B8($v) => {
                #[allow(dead_code)]
                type $T = $crate::storage::BoolByte;
                $body
            }
            __H::S32($v) => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            __H::U32($v) => {
                #[allow(dead_code)]
                type $T = u32;
                $body
            }
            __H::U8($v) => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            __H::S64($v) => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            __H::U64($v) => {
                #[allow(dead_code)]
                type $T = u64;
                $body
            }
            __H::S16($v) => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            __H::U16($v) => {
                #[allow(dead_code)]
                type $T = u16;
                $body
            }
            __H::F16($v) => {
                #[allow(dead_code)]
                type $T = half::f16;
                $body
            }
            __H::BF16($v) => {
                #[allow(dead_code)]
                type $T = half::bf16;
                $body
            }
        }
    }};
}
pub(crate) use with_vec;

/// Runs `$body` with `$T` bound to the Rust type of a `DType` value.
macro_rules! with_dtype {
    ($dt:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dt {
            __D::F32 => {
                type $T = f32;
                $body
            }
            __D::C32 => {
                type $T = $crate::dtype::c32;
                $body
            }
            __D::F64 => {
                type $T = f64;
                $body
            }
            __D::C64 => {
                type $T = $crate::dtype::c64;
                $body
            }
            __D::B8 => {
                type $T = $crate::storage::BoolByte;
                $body
            }
            __D::S32 => {
                type $T = i32;
                $body
            }
            __D::U32 => {
                type $T = u32;
                $body
            }
            __D::U8 => {
                type $T = u8;
                $body
            }
            __D::S64 => {
                type $T = i64;
                $body
            }
            __D::U64 => {
                type $T = u64;
                $body
            }
            __D::S16 => {
                type $T = i16;
                $body
            }
            __D::U16 => {
                type $T = u16;
                $body
            }
            __D::F16 => {
                type $T = half::f16;
                $body
            }
            __D::BF16 => {
                type $T = half::bf16;
                $body
            }
        }
    }};
}
pub(crate) use with_dtype;

/// Runs `$body` with `$T` bound to the Rust type of one of the four floating `DType`s (f32,
/// f64, c32, c64), the types the signal, linear algebra and sparse kernels exist for; any other
/// type evaluates `$other` with `$o` bound to it (each caller's own panic).
macro_rules! with_float {
    ($dt:expr, $T:ident => $body:expr, $o:ident => $other:expr) => {{
        use $crate::dtype::DType as __D;
        match $dt {
            __D::F32 => {
                type $T = f32;
                $body
            }
            __D::F64 => {
                type $T = f64;
                $body
            }
            __D::C32 => {
                type $T = $crate::dtype::c32;
                $body
            }
            __D::C64 => {
                type $T = $crate::dtype::c64;
                $body
            }
            $o => $other,
        }
    }};
}
pub(crate) use with_float;

/// A value of any element type, widened without loss, used to define casts once.
#[derive(Clone, Copy, Debug)]
pub enum Lit {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Real(f64),
    Cplx(c64),
}

pub(crate) mod bf16_round;
pub(crate) mod cache;

pub(crate) mod sealed {
    use super::*;
    /// Links a Rust element type to its `HostVec` variant and to `Lit`.
    pub trait Element: Copy + Send + Sync + 'static {
        /// The tag of this type.
        const DTYPE: DType;
        /// Wraps a vector.
        fn wrap(v: Vec<Self>) -> HostVec;
        /// Borrows the vector if the tag matches.
        fn slice(h: &HostVec) -> Option<&[Self]>;
        /// Takes the vector if the tag matches.
        fn unwrap(h: HostVec) -> Option<Vec<Self>>;
        /// Copies elements `range` out if the tag matches (`bool` normalises its bytes here,
        /// where [`Element::slice`] cannot).
        fn read(h: &HostVec, range: std::ops::Range<usize>) -> Option<Vec<Self>> {
            Self::slice(h).map(|s| s[range].to_vec())
        }
        /// Widens to a `Lit`.
        fn to_lit(self) -> Lit;
        /// Narrows from a `Lit` with the cast rules documented on `Array::cast`.
        fn from_lit(l: Lit) -> Self;
    }
}
pub(crate) use sealed::Element;

macro_rules! element {
    ($t:ty, $var:ident, $self_:ident => $to:expr, $l:ident => $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$var;
            fn wrap(v: Vec<Self>) -> HostVec {
                HostVec::$var(v)
            }
            fn slice(h: &HostVec) -> Option<&[Self]> {
                match h {
                    HostVec::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn unwrap(h: HostVec) -> Option<Vec<Self>> {
                match h {
                    HostVec::$var(v) => Some(v),
                    _ => None,
                }
            }
            #[inline(always)]
            fn to_lit($self_) -> Lit {
                $to
            }
            #[inline(always)]
            fn from_lit($l: Lit) -> Self {
                $from
            }
        }
    };
}

// Numeric narrowing follows Rust's `as`: floats to integers truncate toward zero and saturate
// (NaN gives 0), integers wrap. Complex to real keeps the real part. Anything to bool is
// "not zero"; a stored bool to a number is its byte (0 or 1 unless it holds a count).
macro_rules! prim_element {
    ($t:ty, $var:ident, $kind:ident) => {
        element!($t, $var, self => Lit::$kind(self as _), l => match l {
            Lit::Bool(b) => b as u8 as $t,
            Lit::Int(i) => i as $t,
            Lit::Uint(u) => u as $t,
            Lit::Real(f) => f as $t,
            Lit::Cplx(c) => c.re as $t,
        });
    };
}
prim_element!(f32, F32, Real);
prim_element!(f64, F64, Real);
prim_element!(u8, U8, Uint);
prim_element!(u16, U16, Uint);
prim_element!(u32, U32, Uint);
prim_element!(u64, U64, Uint);
prim_element!(i16, S16, Int);
prim_element!(i32, S32, Int);
prim_element!(i64, S64, Int);

// The stored bool byte: a number when read as one (its byte), "not zero" when made from one.
element!(BoolByte, B8, self => Lit::Uint(self.0 as u64), l => BoolByte::of(match l {
    Lit::Bool(b) => b,
    Lit::Int(i) => i != 0,
    Lit::Uint(u) => u != 0,
    Lit::Real(f) => f != 0.0,
    Lit::Cplx(c) => c.re != 0.0 || c.im != 0.0,
}));

// The Rust `bool` of the public interface, over the same `B8` storage: its vectors are
// reinterpreted on the way in and normalised on the way out.
impl Element for bool {
    const DTYPE: DType = DType::B8;
    fn wrap(v: Vec<bool>) -> HostVec {
        HostVec::B8(bools_to_bytes(v))
    }
    /// Some only when every byte is 0 or 1 (else the caller must use [`Element::read`]).
    fn slice(h: &HostVec) -> Option<&[bool]> {
        match h {
            HostVec::B8(v) if v.iter().all(|b| b.0 <= 1) => {
                // SAFETY: every byte is 0 or 1, so each is a valid bool of the same layout.
                Some(unsafe { std::slice::from_raw_parts(v.as_ptr() as *const bool, v.len()) })
            }
            _ => None,
        }
    }
    fn unwrap(h: HostVec) -> Option<Vec<bool>> {
        match h {
            HostVec::B8(v) => Some(bytes_to_bools(v)),
            _ => None,
        }
    }
    fn read(h: &HostVec, range: std::ops::Range<usize>) -> Option<Vec<bool>> {
        match h {
            HostVec::B8(v) => Some(v[range].iter().map(|b| b.get()).collect()),
            _ => None,
        }
    }
    #[inline(always)]
    fn to_lit(self) -> Lit {
        Lit::Bool(self)
    }
    #[inline(always)]
    fn from_lit(l: Lit) -> bool {
        BoolByte::from_lit(l).get()
    }
}
element!(f16, F16, self => Lit::Real(self.to_f64()), l => f16::from_f64(f64::from_lit(l)));
// bf16 rounds to nearest even from the exact value (see `bf16_round`), NaN and infinities kept.
element!(bf16, BF16, self => Lit::Real(self.to_f64()), l => match l {
    Lit::Bool(b) => bf16_round::from_f32(b as u8 as f32),
    Lit::Int(i) => bf16_round::from_i64(i),
    Lit::Uint(u) => bf16_round::from_u64(u),
    Lit::Real(f) => bf16_round::from_f64(f),
    Lit::Cplx(c) => bf16_round::from_f64(c.re),
});
element!(c32, C32, self => Lit::Cplx(c64::new(self.re as f64, self.im as f64)), l => match l {
    Lit::Cplx(c) => c32::new(c.re as f32, c.im as f32),
    other => c32::new(f32::from_lit(other), 0.0),
});
element!(c64, C64, self => Lit::Cplx(self), l => match l {
    Lit::Cplx(c) => c,
    other => c64::new(f64::from_lit(other), 0.0),
});

/// Converts one element to another element type.
#[inline(always)]
pub(crate) fn convert<S: Element, D: Element>(s: S) -> D {
    D::from_lit(s.to_lit())
}

impl HostVec {
    /// The element type.
    pub(crate) fn dtype(&self) -> DType {
        with_vec!(self, _v, T => <T as Element>::DTYPE)
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        with_vec!(self, v, T => v.len())
    }

    /// A vector of `len` default (zero) elements of a type, for small, fixed sizes; arrays of
    /// any size go through [`HostVec::try_zeros`].
    pub(crate) fn zeros(dtype: DType, len: usize) -> HostVec {
        with_dtype!(dtype, T => T::wrap(vec![T::default(); len]))
    }

    /// A vector of `len` default (zero) elements of a type, or [`Error::OutOfMemory`].
    pub(crate) fn try_zeros(dtype: DType, len: usize) -> Result<HostVec, Error> {
        with_dtype!(dtype, T => Ok(T::wrap(try_filled(len, T::default())?)))
    }

    /// Converts every element to `to` (see `Element` for the rules).
    pub(crate) fn cast(&self, to: DType) -> HostVec {
        if self.dtype() == to {
            return self.clone();
        }
        with_vec!(self, v, S => with_dtype!(to, D => D::wrap(cast_slice::<S, D>(v))))
    }

    /// Elements `range` as a new vector, or [`Error::OutOfMemory`].
    pub(crate) fn try_sub(&self, range: std::ops::Range<usize>) -> Result<HostVec, Error> {
        with_vec!(self, v, T => Ok(T::wrap(try_copied(&v[range])?)))
    }

    /// Elements `range` as a new vector, for a few elements (a scalar, a chunk's splat).
    pub(crate) fn sub(&self, range: std::ops::Range<usize>) -> HostVec {
        with_vec!(self, v, T => T::wrap(v[range].to_vec()))
    }

    /// Typed view of the elements; panics if the type does not match (an internal bug).
    pub(crate) fn as_slice<T: Element>(&self) -> &[T] {
        T::slice(self).expect("internal error: element type mismatch")
    }

    /// Typed elements: borrowed where they can be, else (bool bytes other than 0 or 1, read as
    /// Rust `bool`s) a normalised copy. Panics if the type does not match (an internal bug).
    pub(crate) fn view<T: Element>(&self) -> std::borrow::Cow<'_, [T]> {
        match T::slice(self) {
            Some(s) => std::borrow::Cow::Borrowed(s),
            None => std::borrow::Cow::Owned(self.read::<T>(0..self.len())),
        }
    }

    /// A copy of elements `range` as a typed vector (bool bytes normalised to 0/1); panics if
    /// the type does not match (an internal bug).
    pub(crate) fn read<T: Element>(&self, range: std::ops::Range<usize>) -> Vec<T> {
        T::read(self, range).expect("internal error: element type mismatch")
    }

    /// Typed vector; panics if the type does not match (an internal bug).
    pub(crate) fn into_vec<T: Element>(self) -> Vec<T> {
        T::unwrap(self).expect("internal error: element type mismatch")
    }
}

/// Converts a slice of one element type into a vector of another.
pub(crate) fn cast_slice<S: Element, D: Element>(src: &[S]) -> Vec<D> {
    src.iter().map(|&s| convert::<S, D>(s)).collect()
}

impl HostVec {
    /// The elements' bytes in memory order (what a device copy moves).
    #[allow(clippy::unnecessary_cast)] // the cast is needed for every type but u8
    pub(crate) fn as_bytes(&self) -> &[u8] {
        with_vec!(self, v, T => {
            // SAFETY: every stored element type is plain data without padding (bool is one
            // byte, f16 and bf16 two bytes, complex two packed floats), so its bytes may be read.
            unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(&v[..])) }
        })
    }

    /// Elements of type `dtype` from their bytes, or [`Error::OutOfMemory`]. bool bytes keep
    /// their values (a byte that is not zero is true).
    #[allow(clippy::unnecessary_cast)] // the cast is needed for every type but u8
    pub(crate) fn try_from_bytes(dtype: DType, bytes: &[u8]) -> Result<HostVec, Error> {
        with_dtype!(dtype, T => {
            let n = bytes.len() / std::mem::size_of::<T>();
            assert_eq!(n * std::mem::size_of::<T>(), bytes.len(), "internal error: partial element");
            let mut v: Vec<T> = alloc_uninit(n)?;
            // SAFETY: every bit pattern is a valid value of the stored element types (bool is
            // stored as a `BoolByte`), and the destination has room for `n` elements.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr() as *mut u8, bytes.len());
                v.set_len(n);
            }
            Ok(T::wrap(v))
        })
    }
}

/// Host buffers at least this large ask the kernel for transparent huge pages.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// The size in bytes of `n` elements of `T`, or [`Error::OutOfMemory`] when it does not fit in
/// an allocation (more than `isize::MAX` bytes). A size that overflows reports `usize::MAX`
/// bytes, as the CUDA memory manager does for a request it cannot round up: no memory holds it.
pub(crate) fn bytes_of<T>(n: usize) -> Result<usize, Error> {
    match n.checked_mul(std::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(bytes),
        Some(bytes) => Err(Error::OutOfMemory { bytes }),
        None => Err(Error::OutOfMemory { bytes: usize::MAX }),
    }
}

/// An empty vector with room for `n` elements, for outputs that are written in full before
/// they are read: a block of the CPU backend's cache (`backend/cpu/cache.rs`) when one fits,
/// else a new allocation. Every buffer of the CPU backend whose size follows an array's comes
/// from here (or from [`try_filled`] and [`try_copied`], which start here).
///
/// Running out of memory is an error, as on CUDA: the request is made fallibly, and when it
/// fails the cache's blocks go back to the system and it is tried once more (the CUDA memory
/// manager collects garbage the same way) before [`Error::OutOfMemory`] reports its size.
/// Where the system overcommits memory (Linux by default), a request it cannot possibly serve
/// fails here; one that it grants but cannot back with pages fails later, when the pages are
/// touched, and that no allocator can report.
///
/// Why huge pages: a fresh multi-megabyte buffer comes straight from `mmap`, and touching it
/// for the first time costs one page fault per 4 KiB page, which for a streaming kernel costs as
/// much as the arithmetic. Asking for transparent huge pages on such buffers (where the system
/// runs them in `madvise` mode, as most distributions do) cuts the faults 512-fold. It is
/// advice only: where it is refused or unsupported nothing changes.
pub(crate) fn alloc_uninit<T: Copy>(n: usize) -> Result<Vec<T>, Error> {
    if let Some(v) = crate::storage::cache::take(n) {
        return Ok(v);
    }
    let bytes = bytes_of::<T>(n)?;
    let mut v: Vec<T> = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        crate::storage::cache::clear();
        v.try_reserve_exact(n).map_err(|_| Error::OutOfMemory { bytes })?;
    }
    if bytes >= HUGE_PAGE_THRESHOLD {
        advise_huge_pages(v.as_ptr() as usize, bytes);
    }
    Ok(v)
}

/// A vector of `n` copies of `value`, or [`Error::OutOfMemory`] (see [`alloc_uninit`]).
pub(crate) fn try_filled<T: Copy>(n: usize, value: T) -> Result<Vec<T>, Error> {
    let mut v = alloc_uninit(n)?;
    v.resize(n, value);
    Ok(v)
}

/// A copy of `src` in a new vector, or [`Error::OutOfMemory`] (see [`alloc_uninit`]).
pub(crate) fn try_copied<T: Copy>(src: &[T]) -> Result<Vec<T>, Error> {
    let mut v = alloc_uninit(src.len())?;
    v.extend_from_slice(src);
    Ok(v)
}

/// `f` applied to every element of `src`, in a new vector, or [`Error::OutOfMemory`] (see
/// [`alloc_uninit`]).
pub(crate) fn try_mapped<S: Copy, T: Copy>(
    src: &[S],
    f: impl FnMut(&S) -> T,
) -> Result<Vec<T>, Error> {
    let mut v = alloc_uninit(src.len())?;
    v.extend(src.iter().map(f));
    Ok(v)
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(addr: usize, bytes: usize) {
    const HUGE: usize = 2 << 20;
    // only whole 2 MiB extents inside the allocation can be backed by huge pages
    let start = addr.next_multiple_of(HUGE);
    let end = (addr + bytes) & !(HUGE - 1);
    if end > start {
        // SAFETY: the range lies inside an allocation this process owns; MADV_HUGEPAGE changes
        // how it is backed, never its contents or its validity.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_addr: usize, _bytes: usize) {}
