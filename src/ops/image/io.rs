//! Reading and writing image files (PNG, JPEG, BMP and TIFF) through the `image` crate.
//!
//! The layout is ArrayFire's: an image of `h` rows and `w` columns is an array of dims
//! `h x w x c`, column-major, the channels (1 gray, 3 RGB, 4 RGBA) along dimension 2.
//! The format is recognised from the file's contents when reading and from the extension
//! when writing.
//!
//! Failures are not the caller's bugs, so they are [`Error::ImageFile`] values naming the
//! path: the `try_` forms return them and the plain forms (arrayfire-rust's signatures)
//! panic with their text. A decoder that panics on a malformed file is caught and reported
//! the same way.

use std::panic::{catch_unwind, AssertUnwindSafe};

use image::{DynamicImage, ImageBuffer, Luma, LumaA, Rgb, Rgba};

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{HasAfEnum, ImageNativeType, RealNumber};
use crate::error::{Error, Result};
use crate::error_handler::OrRaise;
use crate::ops::reduce::max_all;

fn fail(path: &str, reason: impl std::fmt::Display) -> Error {
    Error::ImageFile { path: path.to_string(), reason: reason.to_string() }
}

/// Runs `f`, turning a panic inside it (a decoder's or an encoder's) into an error.
fn guarded<R>(path: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the codec failed".into());
        Err(fail(path, format!("malformed image ({why})")))
    })
}

fn decode(path: &str) -> Result<DynamicImage> {
    guarded(path, || {
        let reader = image::ImageReader::open(path).map_err(|e| fail(path, e))?;
        let reader = reader.with_guessed_format().map_err(|e| fail(path, e))?;
        if reader.format().is_none() {
            return Err(fail(path, "not an image in a supported format (PNG, JPEG, BMP, TIFF)"));
        }
        reader.decode().map_err(|e| fail(path, e))
    })
}

/// The samples of an image as stored (8-bit 0..=255, 16-bit 0..=65535, float as is),
/// interleaved row by row, and the number of channels.
fn stored_samples(img: &DynamicImage) -> (Vec<f32>, usize) {
    fn conv<T: Copy + Into<f32>>(v: &[T]) -> Vec<f32> {
        v.iter().map(|&x| x.into()).collect()
    }
    match img {
        DynamicImage::ImageLuma8(b) => (conv(b.as_raw()), 1),
        DynamicImage::ImageLumaA8(b) => (conv(b.as_raw()), 2),
        DynamicImage::ImageRgb8(b) => (conv(b.as_raw()), 3),
        DynamicImage::ImageRgba8(b) => (conv(b.as_raw()), 4),
        DynamicImage::ImageLuma16(b) => (conv(b.as_raw()), 1),
        DynamicImage::ImageLumaA16(b) => (conv(b.as_raw()), 2),
        DynamicImage::ImageRgb16(b) => (conv(b.as_raw()), 3),
        DynamicImage::ImageRgba16(b) => (conv(b.as_raw()), 4),
        DynamicImage::ImageRgb32F(b) => (b.as_raw().clone(), 3),
        DynamicImage::ImageRgba32F(b) => (b.as_raw().clone(), 4),
        other => (other.to_rgba32f().into_raw(), 4),
    }
}

/// The column-major `h x w x c` layout of the pixels `pick(pixel, channel)`.
fn column_major(w: usize, h: usize, c: usize, pick: impl Fn(usize, usize) -> f32) -> Vec<f32> {
    let mut out = vec![0.0f32; w * h * c];
    for ch in 0..c {
        for x in 0..w {
            for y in 0..h {
                out[y + h * (x + w * ch)] = pick(y * w + x, ch);
            }
        }
    }
    out
}

fn image_dims(h: usize, w: usize, c: usize) -> Dim4 {
    Dim4::new(&[h as u64, w as u64, c as u64, 1])
}

/// The luma weights ArrayFire's grayscale conversions use (BT.709).
const LUMA: [f64; 3] = [0.2126, 0.7152, 0.0722];

fn load(path: &str, is_color: bool) -> Result<(Vec<f32>, Dim4)> {
    let img = decode(path)?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (s, sc) = stored_samples(&img);
    let at = |p: usize, ch: usize| s[p * sc + ch];
    Ok(if is_color {
        // gray sources repeat their one channel; an alpha channel is kept as a fourth
        let c = if sc == 2 || sc == 4 { 4 } else { 3 };
        let v = column_major(w, h, c, |p, ch| match (sc, ch) {
            (1, _) | (2, 0..=2) => at(p, 0),
            (2, _) => at(p, 1),
            _ => at(p, ch),
        });
        (v, image_dims(h, w, c))
    } else {
        let v = column_major(w, h, 1, |p, _| {
            if sc <= 2 {
                return at(p, 0);
            }
            let (r, g, b) = (at(p, 0), at(p, 1), at(p, 2));
            if r == g && g == b {
                // a gray pixel stays exactly itself
                r
            } else {
                let l = LUMA[0] * r as f64 + LUMA[1] * g as f64 + LUMA[2] * b as f64;
                l as f32
            }
        });
        (v, image_dims(h, w, 1))
    })
}

/// Reads an image file as ArrayFire does: the values as stored (0 to 255 for 8-bit images,
/// 0 to 65535 for 16-bit ones), converted to `T`; with `is_color` as RGB (3 channels, or RGBA
/// where the file has alpha; a gray file's channel repeated), else as one gray channel (a
/// colour file converted with the weights 0.2126, 0.7152, 0.0722).
///
/// ```
/// use emberfire::{dim4, load_image, save_image, Array};
/// let path = std::env::temp_dir().join("emberfire_doc_load_image.png");
/// let path = path.to_str().unwrap().to_string();
/// let img = Array::new(&[0.0f32, 64.0, 128.0, 255.0, 10.0, 20.0], dim4!(2, 3));
/// save_image(path.clone(), &img);
/// let back: Array<f32> = load_image(path.clone(), false);
/// assert_eq!(back.dims(), dim4!(2, 3));
/// assert_eq!(back.to_vec(), img.to_vec());
/// # std::fs::remove_file(&path).ok();
/// ```
///
/// Panics with the text of [`try_load_image`]'s error (which names the path) if the file is
/// missing, unreadable, corrupt or not in a supported format.
pub fn load_image<T>(filename: String, is_color: bool) -> Array<T>
where
    T: HasAfEnum + RealNumber,
{
    try_load_image(filename, is_color).or_raise("load_image")
}

/// [`load_image`], returning an [`Error::ImageFile`] naming the path instead of panicking.
///
/// ```
/// use emberfire::{try_load_image, Array, Error};
/// let r = try_load_image::<f32>("/no/such/picture.png".to_string(), true);
/// match r {
///     Err(Error::ImageFile { path, .. }) => assert_eq!(path, "/no/such/picture.png"),
///     _ => panic!("expected an image file error"),
/// }
/// ```
pub fn try_load_image<T>(filename: String, is_color: bool) -> Result<Array<T>>
where
    T: HasAfEnum + RealNumber,
{
    let (v, dims) = load(&filename, is_color)?;
    Ok(Array::new(&v, dims).cast())
}

/// Reads an image file in its own channels (1 gray, 2 gray and alpha, 3 RGB, 4 RGBA) with
/// the values as stored, converted to `T` (u8 for 8-bit files, u16 for 16-bit ones and f32
/// keep them exactly). A palette image reads as RGB (BMP writes gray images as a palette).
///
/// ```
/// use emberfire::{dim4, load_image_native, save_image_native, Array};
/// let path = std::env::temp_dir().join("emberfire_doc_native.png");
/// let path = path.to_str().unwrap().to_string();
/// let img = Array::new(&[0u16, 1000, 40000, 65535], dim4!(2, 2));
/// save_image_native(path.clone(), &img);
/// let back: Array<u16> = load_image_native(path.clone());
/// assert_eq!(back.to_vec(), img.to_vec());
/// # std::fs::remove_file(&path).ok();
/// ```
///
/// Panics with the text of [`try_load_image_native`]'s error if the file cannot be read.
pub fn load_image_native<T>(filename: String) -> Array<T>
where
    T: HasAfEnum + ImageNativeType,
{
    try_load_image_native(filename).or_raise("load_image_native")
}

/// [`load_image_native`], returning an [`Error::ImageFile`] naming the path instead of
/// panicking.
///
/// ```
/// use emberfire::{try_load_image_native, Array};
/// assert!(try_load_image_native::<u8>("/no/such/file.bmp".to_string()).is_err());
/// ```
pub fn try_load_image_native<T>(filename: String) -> Result<Array<T>>
where
    T: HasAfEnum + ImageNativeType,
{
    let img = decode(&filename)?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (s, sc) = stored_samples(&img);
    let v = column_major(w, h, sc, |p, ch| s[p * sc + ch]);
    Ok(Array::new(&v, image_dims(h, w, sc)).cast())
}

/// The image's rows, columns and channels, checked for saving.
fn save_shape(path: &str, dims: Dim4) -> Result<(u32, u32, usize)> {
    let c = dims[2] as usize;
    if dims[3] != 1 || !matches!(c, 1..=4) || dims[0] == 0 || dims[1] == 0 {
        return Err(fail(
            path,
            format!(
                "cannot save an array of dims {dims} as an image (rows x columns x 1, 2, 3 or 4 \
                 channels)"
            ),
        ));
    }
    let (h, w) = (u32::try_from(dims[0]), u32::try_from(dims[1]));
    match (h, w) {
        (Ok(h), Ok(w)) => Ok((h, w, c)),
        _ => Err(fail(path, format!("dims {dims} are too large for an image"))),
    }
}

/// Row-major interleaved samples of a column-major `h x w x c` array.
fn interleaved<S: Copy>(v: &[S], h: usize, w: usize, c: usize) -> Vec<S> {
    let mut out = Vec::with_capacity(v.len());
    for y in 0..h {
        for x in 0..w {
            for ch in 0..c {
                out.push(v[y + h * (x + w * ch)]);
            }
        }
    }
    out
}

fn write(path: &str, img: DynamicImage) -> Result<()> {
    guarded(path, || img.save(path).map_err(|e| fail(path, e)))
}

macro_rules! buffer_image {
    ($w:expr, $h:expr, $c:expr, $data:expr, $path:expr; $l:ident, $la:ident, $rgb:ident, $rgba:ident) => {{
        let (w, h, data) = ($w, $h, $data);
        let bad = || fail($path, "internal: sample count does not match the image size");
        match $c {
            1 => DynamicImage::$l(ImageBuffer::<Luma<_>, _>::from_raw(w, h, data).ok_or_else(bad)?),
            2 => {
                DynamicImage::$la(ImageBuffer::<LumaA<_>, _>::from_raw(w, h, data).ok_or_else(bad)?)
            }
            3 => {
                DynamicImage::$rgb(ImageBuffer::<Rgb<_>, _>::from_raw(w, h, data).ok_or_else(bad)?)
            }
            _ => DynamicImage::$rgba(
                ImageBuffer::<Rgba<_>, _>::from_raw(w, h, data).ok_or_else(bad)?,
            ),
        }
    }};
}

/// Writes an image file as ArrayFire does: 8 bits per channel, the values scaled by their
/// maximum (up to 1: times 255; under 256: as they are; under 65536: divided by 257) and
/// truncated to 0..=255. The array is `rows x columns x channels` with 1 (gray), 3 (RGB) or
/// 4 (RGBA) channels (2, gray and alpha, where the format has it); the format follows the
/// file's extension.
///
/// ```
/// use emberfire::{dim4, load_image, save_image, Array};
/// let path = std::env::temp_dir().join("emberfire_doc_save_image.bmp");
/// let path = path.to_str().unwrap().to_string();
/// let unit = Array::new(&[0.0f64, 0.5, 1.0], dim4!(1, 1, 3)); // one pixel in [0, 1]
/// save_image(path.clone(), &unit);
/// let back: Array<u8> = load_image(path.clone(), true);
/// assert_eq!(back.to_vec(), vec![0, 127, 255]);
/// # std::fs::remove_file(&path).ok();
/// ```
///
/// Panics with the text of [`try_save_image`]'s error if the file cannot be written.
pub fn save_image<T>(filename: String, input: &Array<T>)
where
    T: HasAfEnum + RealNumber,
{
    try_save_image(filename, input).or_raise("save_image")
}

/// [`save_image`], returning an [`Error::ImageFile`] naming the path instead of panicking
/// (for a shape that is not an image, a format that cannot hold the channels, an unknown
/// extension, or a failed write).
///
/// ```
/// use emberfire::{dim4, try_save_image, Array};
/// let img = Array::new(&[1.0f32; 4], dim4!(2, 2));
/// assert!(try_save_image("/no/such/dir/out.png".to_string(), &img).is_err());
/// ```
pub fn try_save_image<T>(filename: String, input: &Array<T>) -> Result<()>
where
    T: HasAfEnum + RealNumber,
{
    let path = filename.as_str();
    let (h, w, c) = save_shape(path, input.dims())?;
    let x: Array<f32> = input.cast();
    let (top, _) = max_all(&x);
    let scale = if top <= 1.0 {
        255.0
    } else if top < 256.0 {
        1.0
    } else if top < 65536.0 {
        1.0 / 257.0
    } else {
        1.0
    };
    let v: Vec<u8> = x.to_vec().iter().map(|&s| (s * scale) as u8).collect();
    let data = interleaved(&v, h as usize, w as usize, c);
    let img = buffer_image!(w, h, c, data, path; ImageLuma8, ImageLumaA8, ImageRgb8, ImageRgba8);
    write(path, img)
}

/// Writes an image file in the array's own type: u8 as 8 bits per channel, u16 as 16 (PNG
/// and TIFF), f32 as 32-bit floats (TIFF, RGB or RGBA only). Channels and layout as for
/// [`save_image`]; the values are written unscaled.
///
/// ```
/// use emberfire::{dim4, load_image_native, save_image_native, Array};
/// let path = std::env::temp_dir().join("emberfire_doc_native.tif");
/// let path = path.to_str().unwrap().to_string();
/// let img = Array::new(&[0.25f32, -1.0, 300.5], dim4!(1, 1, 3));
/// save_image_native(path.clone(), &img);
/// assert_eq!(load_image_native::<f32>(path.clone()).to_vec(), img.to_vec());
/// # std::fs::remove_file(&path).ok();
/// ```
///
/// Panics with the text of [`try_save_image_native`]'s error if the file cannot be written.
pub fn save_image_native<T>(filename: String, input: &Array<T>)
where
    T: HasAfEnum + ImageNativeType,
{
    try_save_image_native(filename, input).or_raise("save_image_native")
}

/// [`save_image_native`], returning an [`Error::ImageFile`] naming the path instead of
/// panicking.
///
/// ```
/// use emberfire::{dim4, try_save_image_native, Array};
/// let img = Array::new(&[1u8; 8], dim4!(2, 2, 2, 1));
/// let path = std::env::temp_dir().join("emberfire_doc_native_bad.xyz");
/// assert!(try_save_image_native(path.to_str().unwrap().to_string(), &img).is_err());
/// ```
pub fn try_save_image_native<T>(filename: String, input: &Array<T>) -> Result<()>
where
    T: HasAfEnum + ImageNativeType,
{
    let path = filename.as_str();
    let (h, w, c) = save_shape(path, input.dims())?;
    let (hu, wu) = (h as usize, w as usize);
    let img = match T::get_af_dtype() {
        crate::DType::U8 => {
            let data = interleaved(&input.cast::<u8>().to_vec(), hu, wu, c);
            buffer_image!(w, h, c, data, path; ImageLuma8, ImageLumaA8, ImageRgb8, ImageRgba8)
        }
        crate::DType::U16 => {
            let data = interleaved(&input.cast::<u16>().to_vec(), hu, wu, c);
            buffer_image!(w, h, c, data, path; ImageLuma16, ImageLumaA16, ImageRgb16, ImageRgba16)
        }
        _ => {
            if c < 3 {
                return Err(fail(path, "f32 images are saved with 3 or 4 channels"));
            }
            let data = interleaved(&input.cast::<f32>().to_vec(), hu, wu, c);
            let bad = || fail(path, "internal: sample count does not match the image size");
            if c == 3 {
                DynamicImage::ImageRgb32F(ImageBuffer::from_raw(w, h, data).ok_or_else(bad)?)
            } else {
                DynamicImage::ImageRgba32F(ImageBuffer::from_raw(w, h, data).ok_or_else(bad)?)
            }
        }
    };
    write(path, img)
}

/// Whether image files can be read and written: always true, the codecs are built in.
///
/// ```
/// assert!(emberfire::is_imageio_available());
/// ```
pub fn is_imageio_available() -> bool {
    true
}
