//! Text formatting behind `emberfire::print`, `af_print!`, and the `Display` /
//! `Debug` impls of `Array<T>`.
//!
//! The layout copies ArrayFire's `af_print` (`src/api/c/print.cpp`):
//!
//! ```text
//! NAME
//! [d0 d1 d2 d3]
//!     1.0000     3.0000     5.0000
//!     2.0000     4.0000     6.0000
//!
//! ```
//!
//! (Each element row really ends in a space; see [`format_array`].)
//!
//! ArrayFire transposes the first two dimensions and walks the result
//! recursively: the innermost level prints one matrix row (every element
//! followed by a space, then a newline) and every outer level prints a newline
//! after its children. That recursion starts at the array's highest
//! non-singleton dimension, which is why a 2-D matrix ends with one blank line,
//! a 3-D array with two, a 4-D array with three, and a single row (`[1 n 1 1]`)
//! or a scalar with none. This module reproduces that exactly, so output can
//! be compared line for line with ArrayFire's.
//!
//! Everything here works on data already copied to the host in column-major
//! order, so it has no device dependency and is easy to test.

use std::fmt::Write as _;

/// Digits after the decimal point that ArrayFire's `af_print` uses when no
/// precision is given.
pub(crate) const DEFAULT_PRECISION: usize = 4;

/// How many elements `{:?}` shows before cutting the list short with `...`.
/// Debug output ends up in logs and assertion messages, so a huge array must
/// not flood them.
const DEBUG_MAX_ELEMENTS: usize = 64;

/// An element type that can be printed in ArrayFire's style.
pub(crate) trait PrintElem: Copy {
    /// Formats one element on its own, without padding.
    ///
    /// Floating-point types use fixed notation with `precision` digits after
    /// the point (C++ `std::fixed << std::setprecision(precision)`), and NaN
    /// and infinities are spelled `nan`, `inf` and `-inf` as the C library
    /// spells them. Integer types ignore `precision`.
    fn format(&self, precision: usize) -> String;

    /// The short type name shown by [`format_debug`]: Rust's name for real
    /// types (`"f32"`, `"f16"`, `"bool"`, `"u8"`, ...) and ArrayFire's `"c32"`
    /// and `"c64"` for complex ones.
    fn type_name() -> &'static str;
}

/// Formats a real floating-point value the way C++'s `std::fixed` does.
///
/// Values of every float type are widened to `f64` first; the widening is
/// exact, and C++ `operator<<` widens `float` to `double` the same way, so the
/// digits come out identical. Rust's `{:.N}` prints the exact decimal value
/// rounded half-to-even, matching glibc's `printf("%.Nf")`.
fn format_float(value: f64, precision: usize) -> String {
    if value.is_nan() {
        // glibc would write `-nan` for a NaN with the sign bit set; the sign of
        // a NaN carries no meaning, so always write `nan`.
        "nan".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{value:.precision$}")
    }
}

/// Formats a complex value as `(re,im)`, like `std::complex`'s `operator<<`,
/// with the precision applied to each part.
fn format_complex(re: f64, im: f64, precision: usize) -> String {
    format!("({},{})", format_float(re, precision), format_float(im, precision))
}

impl PrintElem for f32 {
    fn format(&self, precision: usize) -> String {
        format_float(f64::from(*self), precision)
    }

    fn type_name() -> &'static str {
        "f32"
    }
}

impl PrintElem for f64 {
    fn format(&self, precision: usize) -> String {
        format_float(*self, precision)
    }

    fn type_name() -> &'static str {
        "f64"
    }
}

impl PrintElem for bool {
    /// ArrayFire stores `b8` as a `char` and prints it through an `int`, so
    /// booleans come out as `1` and `0`.
    fn format(&self, _precision: usize) -> String {
        if *self { "1" } else { "0" }.to_string()
    }

    fn type_name() -> &'static str {
        "bool"
    }
}

/// A stored bool byte prints as the `bool` it means (a byte that is not zero is `1`).
impl PrintElem for crate::storage::BoolByte {
    fn format(&self, precision: usize) -> String {
        self.get().format(precision)
    }

    fn type_name() -> &'static str {
        "bool"
    }
}

/// Implements [`PrintElem`] for integer types, which print their plain
/// decimal value and ignore the precision (C++ `std::fixed` does not affect
/// integers).
macro_rules! impl_print_elem_int {
    ($($ty:ty => $name:literal),* $(,)?) => {
        $(
            impl PrintElem for $ty {
                fn format(&self, _precision: usize) -> String {
                    self.to_string()
                }

                fn type_name() -> &'static str {
                    $name
                }
            }
        )*
    };
}

impl_print_elem_int!(
    u8 => "u8",
    i16 => "i16",
    u16 => "u16",
    i32 => "i32",
    u32 => "u32",
    i64 => "i64",
    u64 => "u64",
);

/// Returns the number of elements `dims` describes, or panics with a message
/// naming `caller` if the product does not fit in `usize` (such an array
/// could not have been copied to the host anyway).
fn element_count(dims: [u64; 4], caller: &str) -> usize {
    dims.iter()
        .try_fold(1usize, |acc, &d| usize::try_from(d).ok().and_then(|d| acc.checked_mul(d)))
        .unwrap_or_else(|| panic!("{caller}: dims {dims:?} overflow usize"))
}

/// Formats an array in ArrayFire's `af_print` layout.
///
/// * `name` is the first line (the expression text given to `af_print!`); an
///   empty name leaves that line out.
/// * `dims` are the array's four dimensions and `data` its elements in
///   column-major order (dimension 0 varies fastest).
/// * `precision` is the number of digits after the decimal point for
///   floating-point and complex elements ([`DEFAULT_PRECISION`] is
///   ArrayFire's default).
///
/// Every element is right-aligned in a field and followed by one space, and
/// each matrix row ends with that space and a newline. ArrayFire's field is
/// `precision + 6` characters wide (10 by default); an element wider than
/// that makes ArrayFire's columns drift, so here the field widens to the
/// widest element of the whole array instead. Output is therefore identical to
/// ArrayFire's whenever every element fits its field, and stays aligned when
/// one does not.
///
/// An array with no elements prints `<empty>` after the dimensions line.
///
/// # Panics
///
/// If `data.len()` differs from the product of `dims`.
pub(crate) fn format_array<T: PrintElem>(
    name: &str,
    dims: [u64; 4],
    data: &[T],
    precision: usize,
) -> String {
    let count = element_count(dims, "format_array");
    assert_eq!(
        data.len(),
        count,
        "format_array: got {} elements but dims {:?} describe {}",
        data.len(),
        dims,
        count
    );

    let mut out = String::new();
    if !name.is_empty() {
        out.push_str(name);
        out.push('\n');
    }
    // Writing to a String cannot fail, so the fmt::Result is ignored.
    let _ = writeln!(out, "[{} {} {} {}]", dims[0], dims[1], dims[2], dims[3]);

    if count == 0 {
        out.push_str("<empty>\n");
        return out;
    }

    // Format every element up front: the field width depends on the widest
    // one, which is only known after all of them have been formatted.
    let cells: Vec<String> = data.iter().map(|v| v.format(precision)).collect();
    let widest = cells.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let width = widest.max(precision.saturating_add(6));

    // `count` fits in usize and every dim divides it, so these casts are
    // lossless.
    let [d0, d1, d2, d3] = dims.map(|d| d as usize);

    // ArrayFire prints the array transposed in its first two dimensions, so
    // that what it prints as a line is a row of the matrix. Level 0 walks
    // along a row (across columns), level 1 down the rows, levels 2 and 3
    // over the slices. `counts` and `strides` describe each level in terms of
    // the column-major `data`.
    let counts = [d1, d0, d2, d3];
    let strides = [d0, 1, d0 * d1, d0 * d1 * d2];

    // ArrayFire starts the recursion at `ndims() - 1` of the transposed dims,
    // where `ndims()` is 1 for a single element and otherwise the position of
    // the last dimension that is not 1.
    let top_level = if count == 1 { 0 } else { counts.iter().rposition(|&c| c != 1).unwrap_or(0) };

    let printer = Printer { cells: &cells, width, counts, strides };
    printer.write_level(&mut out, top_level, 0);
    out
}

/// The state of ArrayFire's recursive `printer`, over preformatted elements.
struct Printer<'a> {
    cells: &'a [String],
    width: usize,
    counts: [usize; 4],
    strides: [usize; 4],
}

impl Printer<'_> {
    /// Writes the block at `level` whose first element is `cells[base]`.
    ///
    /// Level 0 writes one row. Higher levels write each child block and then
    /// a newline, which is what produces ArrayFire's blank lines.
    fn write_level(&self, out: &mut String, level: usize, base: usize) {
        if level == 0 {
            for i in 0..self.counts[0] {
                let cell = &self.cells[base + i * self.strides[0]];
                let _ = write!(out, "{cell:>width$} ", width = self.width);
            }
        } else {
            for i in 0..self.counts[level] {
                self.write_level(out, level - 1, base + i * self.strides[level]);
            }
        }
        out.push('\n');
    }
}

/// Formats an array for `{:?}`: `Array<f32> [d0 d1 d2 d3] [v0, v1, ...]`.
///
/// Elements are listed in column-major order with [`DEFAULT_PRECISION`]; after
/// the first 64 the list ends with `...`. Unlike [`format_array`] this never
/// panics on a length mismatch (it lists whatever `data` holds), because a
/// `Debug` impl that panics turns one bug report into a second, confusing one.
pub(crate) fn format_debug<T: PrintElem>(dims: [u64; 4], data: &[T]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "Array<{}> [{} {} {} {}] [",
        T::type_name(),
        dims[0],
        dims[1],
        dims[2],
        dims[3]
    );
    for (i, v) in data.iter().take(DEBUG_MAX_ELEMENTS).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&v.format(DEFAULT_PRECISION));
    }
    if data.len() > DEBUG_MAX_ELEMENTS {
        out.push_str(", ...");
    }
    out.push(']');
    out
}

impl PrintElem for half::f16 {
    /// ArrayFire prints `f16` by converting it to `float`; the conversion is
    /// exact, so this matches.
    fn format(&self, precision: usize) -> String {
        format_float(f64::from(self.to_f32()), precision)
    }

    fn type_name() -> &'static str {
        "f16"
    }
}

impl PrintElem for half::bf16 {
    /// Printed through f32, which holds every bf16 value exactly (as for f16).
    fn format(&self, precision: usize) -> String {
        format_float(f64::from(self.to_f32()), precision)
    }

    fn type_name() -> &'static str {
        "bf16"
    }
}

impl PrintElem for num_complex::Complex<f32> {
    fn format(&self, precision: usize) -> String {
        format_complex(f64::from(self.re), f64::from(self.im), precision)
    }

    fn type_name() -> &'static str {
        "c32"
    }
}

impl PrintElem for num_complex::Complex<f64> {
    fn format(&self, precision: usize) -> String {
        format_complex(self.re, self.im, precision)
    }

    fn type_name() -> &'static str {
        "c64"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;
    use num_complex::Complex;

    #[test]
    fn matrix_2x3_f32() {
        // Column-major: column 0 is (1, 2), column 1 is (3, 4), column 2 is
        // (5, 6). Each "x.0000" is 6 wide, padded to 10, then a space.
        let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let expected = concat!(
            "a\n",
            "[2 3 1 1]\n",
            "    1.0000     3.0000     5.0000 \n",
            "    2.0000     4.0000     6.0000 \n",
            "\n",
        );
        assert_eq!(format_array("a", [2, 3, 1, 1], &data, 4), expected);
    }

    #[test]
    fn matrix_3x2_f32_with_expression_name() {
        let data = [0.301f32, -1.5, 2.25, 10.0, 0.0, -0.125];
        let expected = concat!(
            "&a + &b\n",
            "[3 2 1 1]\n",
            "    0.3010    10.0000 \n",
            "   -1.5000     0.0000 \n",
            "    2.2500    -0.1250 \n",
            "\n",
        );
        assert_eq!(format_array("&a + &b", [3, 2, 1, 1], &data, DEFAULT_PRECISION), expected);
    }

    #[test]
    fn cube_2x2x2_i32() {
        // Slice 0 holds 1..=4, slice 1 holds 5..=8. Each slice ends with a
        // blank line and the third dimension adds one more at the very end.
        let data: Vec<i32> = (1..=8).collect();
        let expected = concat!(
            "c\n",
            "[2 2 2 1]\n",
            "         1          3 \n",
            "         2          4 \n",
            "\n",
            "         5          7 \n",
            "         6          8 \n",
            "\n",
            "\n",
        );
        assert_eq!(format_array("c", [2, 2, 2, 1], &data, 4), expected);
    }

    #[test]
    fn four_dimensional_i32() {
        // Transposed dims are [1 1 2 2]: every level from 3 down to 1 closes
        // with a newline, so blank lines pile up as the levels end.
        let data = [1i32, 2, 3, 4];
        let expected = concat!(
            "[1 1 2 2]\n",
            "         1 \n",
            "\n",
            "         2 \n",
            "\n",
            "\n",
            "         3 \n",
            "\n",
            "         4 \n",
            "\n",
            "\n",
            "\n",
        );
        assert_eq!(format_array("", [1, 1, 2, 2], &data, 4), expected);
    }

    #[test]
    fn complex_2x2_c32() {
        // The widest element, "(3.0000,-4.0000)", is 16 characters, more than
        // the default field of 10, so every element is aligned to 16.
        let data = [
            Complex::new(1.0f32, 2.0),
            Complex::new(3.0, -4.0),
            Complex::new(0.5, 0.0),
            Complex::new(-1.25, 1.0),
        ];
        let expected = concat!(
            "z\n",
            "[2 2 1 1]\n",
            " (1.0000,2.0000)  (0.5000,0.0000) \n",
            "(3.0000,-4.0000) (-1.2500,1.0000) \n",
            "\n",
        );
        assert_eq!(format_array("z", [2, 2, 1, 1], &data, 4), expected);
    }

    #[test]
    fn complex_c64_with_precision() {
        let data = [Complex::new(0.5f64, -0.25)];
        let expected = concat!("w\n", "[1 1 1 1]\n", "(0.50,-0.25) \n");
        assert_eq!(format_array("w", [1, 1, 1, 1], &data, 2), expected);
    }

    #[test]
    fn bool_row_vector_without_name() {
        // A single row (ndims 1 after the transpose) prints one line and no
        // blank line; an empty name prints no name line.
        let data = [true, false, true];
        let expected = concat!("[1 3 1 1]\n", "         1          0          1 \n");
        assert_eq!(format_array("", [1, 3, 1, 1], &data, 4), expected);
    }

    #[test]
    fn bool_column_vector() {
        let data = [false, true];
        let expected = concat!("m\n", "[2 1 1 1]\n", "         0 \n", "         1 \n", "\n");
        assert_eq!(format_array("m", [2, 1, 1, 1], &data, 4), expected);
    }

    #[test]
    fn scalar() {
        let expected = concat!("x\n", "[1 1 1 1]\n", "    0.3010 \n");
        assert_eq!(format_array("x", [1, 1, 1, 1], &[0.301f32], 4), expected);
    }

    #[test]
    fn empty_arrays() {
        let expected = concat!("e\n", "[0 3 1 1]\n", "<empty>\n");
        assert_eq!(format_array::<f32>("e", [0, 3, 1, 1], &[], 4), expected);
        let expected = concat!("[2 2 0 1]\n", "<empty>\n");
        assert_eq!(format_array::<i32>("", [2, 2, 0, 1], &[], 4), expected);
    }

    #[test]
    fn nan_and_infinities() {
        let data = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.5];
        let expected = concat!(
            "n\n",
            "[2 2 1 1]\n",
            "       nan       -inf \n",
            "       inf    -0.5000 \n",
            "\n",
        );
        assert_eq!(format_array("n", [2, 2, 1, 1], &data, 4), expected);
        assert_eq!((-f32::NAN).format(4), "nan");
    }

    #[test]
    fn precision_argument() {
        let data = [std::f32::consts::PI, 2.0];
        // Precision 2: field of 8.
        let expected = concat!("p\n", "[2 1 1 1]\n", "    3.14 \n", "    2.00 \n", "\n");
        assert_eq!(format_array("p", [2, 1, 1, 1], &data, 2), expected);
        // Precision 6: field of 12.
        let expected = concat!("p\n", "[2 1 1 1]\n", "    3.141593 \n", "    2.000000 \n", "\n",);
        assert_eq!(format_array("p", [2, 1, 1, 1], &data, 6), expected);
        // Precision 0: no decimal point, as with C++ std::fixed.
        let expected = concat!("p\n", "[2 1 1 1]\n", "     3 \n", "     2 \n", "\n");
        assert_eq!(format_array("p", [2, 1, 1, 1], &data, 0), expected);
    }

    #[test]
    fn precision_sets_integer_field_width_too() {
        // ArrayFire's setw(precision + 6) applies to every type.
        let expected = concat!("[1 2 1 1]\n", "     7     -8 \n");
        assert_eq!(format_array("", [1, 2, 1, 1], &[7i64, -8], 0), expected);
    }

    #[test]
    fn wide_element_widens_every_field() {
        let data = [123456.789f64, 1.0];
        let expected = concat!("[1 2 1 1]\n", "123456.7890      1.0000 \n");
        assert_eq!(format_array("", [1, 2, 1, 1], &data, 4), expected);
    }

    #[test]
    fn element_formats() {
        assert_eq!(f16::from_f32(0.5).format(4), "0.5000");
        assert_eq!(f16::INFINITY.format(4), "inf");
        assert_eq!(255u8.format(4), "255");
        assert_eq!((-3i16).format(4), "-3");
        assert_eq!(u16::MAX.format(4), "65535");
        assert_eq!(u32::MAX.format(4), "4294967295");
        assert_eq!(i64::MIN.format(4), "-9223372036854775808");
        assert_eq!(u64::MAX.format(4), "18446744073709551615");
        assert_eq!((-0.0f64).format(4), "-0.0000");
        assert_eq!(1e20f64.format(1), "100000000000000000000.0");
        // Ties round to even, like glibc's printf.
        assert_eq!(0.125f64.format(2), "0.12");
    }

    #[test]
    fn f16_matrix() {
        let data = [f16::from_f32(0.25), f16::from_f32(-2.0)];
        let expected = concat!("h\n", "[2 1 1 1]\n", "    0.2500 \n", "   -2.0000 \n", "\n");
        assert_eq!(format_array("h", [2, 1, 1, 1], &data, 4), expected);
    }

    #[test]
    #[should_panic(expected = "format_array: got 3 elements but dims [2, 2, 1, 1] describe 4")]
    fn length_mismatch_panics() {
        let _ = format_array("a", [2, 2, 1, 1], &[1.0f32, 2.0, 3.0], 4);
    }

    #[test]
    #[should_panic(expected = "format_array")]
    fn overflowing_dims_panic() {
        let _ = format_array::<u8>("a", [u64::MAX, 2, 1, 1], &[], 4);
    }

    #[test]
    fn debug_short() {
        assert_eq!(
            format_debug([2, 2, 1, 1], &[1.0f32, 2.0, 3.0, 4.5]),
            "Array<f32> [2 2 1 1] [1.0000, 2.0000, 3.0000, 4.5000]"
        );
        assert_eq!(
            format_debug([1, 2, 1, 1], &[Complex::new(1.0f32, -1.0), Complex::new(0.0, 0.5)]),
            "Array<c32> [1 2 1 1] [(1.0000,-1.0000), (0.0000,0.5000)]"
        );
        assert_eq!(format_debug([2, 1, 1, 1], &[true, false]), "Array<bool> [2 1 1 1] [1, 0]");
        assert_eq!(format_debug::<u8>([0, 1, 1, 1], &[]), "Array<u8> [0 1 1 1] []");
    }

    #[test]
    fn debug_truncates_after_64_elements() {
        let data: Vec<i32> = (0..70).collect();
        let listed: Vec<String> = (0..64).map(|i| i.to_string()).collect();
        let expected = format!("Array<i32> [70 1 1 1] [{}, ...]", listed.join(", "));
        assert_eq!(format_debug([70, 1, 1, 1], &data), expected);

        // Exactly 64 elements: all listed, no ellipsis.
        let data: Vec<i32> = (0..64).collect();
        let expected = format!("Array<i32> [64 1 1 1] [{}]", listed.join(", "));
        assert_eq!(format_debug([64, 1, 1, 1], &data), expected);
    }

    #[test]
    fn type_names() {
        assert_eq!(<f32 as PrintElem>::type_name(), "f32");
        assert_eq!(<f64 as PrintElem>::type_name(), "f64");
        assert_eq!(<bool as PrintElem>::type_name(), "bool");
        assert_eq!(<u8 as PrintElem>::type_name(), "u8");
        assert_eq!(<i16 as PrintElem>::type_name(), "i16");
        assert_eq!(<u16 as PrintElem>::type_name(), "u16");
        assert_eq!(<i32 as PrintElem>::type_name(), "i32");
        assert_eq!(<u32 as PrintElem>::type_name(), "u32");
        assert_eq!(<i64 as PrintElem>::type_name(), "i64");
        assert_eq!(<u64 as PrintElem>::type_name(), "u64");
        assert_eq!(<f16 as PrintElem>::type_name(), "f16");
        assert_eq!(<Complex<f32> as PrintElem>::type_name(), "c32");
        assert_eq!(<Complex<f64> as PrintElem>::type_name(), "c64");
    }
}
