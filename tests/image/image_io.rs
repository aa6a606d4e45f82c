//! Image files: round trips through every supported format in a temporary directory, the
//! layout and scaling conventions checked value by value against the arrays written, and
//! failures (missing, corrupt, unsupported, wrong shape) as errors that name the path.

use crate::common;

use std::path::PathBuf;

use common::{Rng, Rng64, SeedableRng};
use emberfire::*;

/// A fresh directory for one test's files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("emberfire_image_io_{}_{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn path(d: &std::path::Path, name: &str) -> String {
    d.join(name).to_str().unwrap().to_string()
}

fn random_u8(r: &mut Rng64, n: usize) -> Vec<u8> {
    (0..n).map(|_| r.gen_range(0..=255u8)).collect()
}

/// Sizes (rows, columns) of the images written: a pixel, a row, a column, odd and larger.
const SIZES: [(u64, u64); 5] = [(1, 1), (1, 9), (7, 1), (3, 5), (67, 41)];

#[test]
fn lossless_formats_round_trip_gray_rgb_and_rgba() {
    let d = dir("lossless");
    let mut r = Rng64::seed_from_u64(1);
    for ext in ["png", "bmp", "tif"] {
        for (h, w) in SIZES {
            for c in [1u64, 3, 4] {
                let v = random_u8(&mut r, (h * w * c) as usize);
                let img = Array::new(&v, dim4!(h, w, c));
                let p = path(&d, &format!("img_{h}x{w}x{c}.{ext}"));
                save_image_native(p.clone(), &img);
                let back: Array<u8> = load_image_native(p.clone());
                if ext == "bmp" && c == 1 {
                    // BMP keeps gray as a palette, which reads back as RGB
                    assert_eq!(back.dims(), dim4!(h, w, 3), "{p}: dims");
                    assert_eq!(back.to_vec(), [v.clone(), v.clone(), v.clone()].concat(), "{p}");
                } else {
                    assert_eq!(back.dims(), dim4!(h, w, c), "{p}: dims");
                    assert_eq!(back.to_vec(), v, "{p}: values");
                }
                // the ArrayFire-style reader gives the same values as f32 (alpha kept)
                let colour: Array<f32> = load_image(p.clone(), c > 1);
                assert_eq!(colour.dims(), dim4!(h, w, c), "{p}: load_image dims");
                let want: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                assert_eq!(colour.to_vec(), want, "{p}: load_image values");
            }
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn load_image_converts_between_gray_and_colour() {
    let d = dir("convert");
    let mut r = Rng64::seed_from_u64(2);
    let (h, w) = (3usize, 5usize);
    let rgb = random_u8(&mut r, h * w * 3);
    let p = path(&d, "rgb.png");
    save_image_native(p.clone(), &Array::new(&rgb, dim4!(h as u64, w as u64, 3)));
    let gray: Array<f64> = load_image(p.clone(), false);
    assert_eq!(gray.dims(), dim4!(h as u64, w as u64));
    let g = gray.to_vec();
    for i in 0..h * w {
        let want = 0.2126f32 * rgb[i] as f32
            + 0.7152f32 * rgb[i + h * w] as f32
            + 0.0722f32 * rgb[i + 2 * h * w] as f32;
        assert!((g[i] - want as f64).abs() < 1e-3, "pixel {i}: {} vs {want}", g[i]);
    }
    let one = random_u8(&mut r, h * w);
    let p = path(&d, "gray.bmp");
    save_image_native(p.clone(), &Array::new(&one, dim4!(h as u64, w as u64)));
    let colour: Array<u8> = load_image(p.clone(), true);
    assert_eq!(colour.dims(), dim4!(h as u64, w as u64, 3));
    assert_eq!(colour.to_vec(), [one.clone(), one.clone(), one].concat());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn save_image_scales_as_arrayfire() {
    let d = dir("scale");
    let mut r = Rng64::seed_from_u64(3);
    let n = 3 * 5;
    // values up to 1 are multiplied by 255, under 256 kept, under 65536 divided by 257;
    // all truncated to u8
    for (hi, scale) in [(1.0f64, 255.0), (255.0, 1.0), (60000.0, 1.0 / 257.0)] {
        let mut v: Vec<f64> = (0..n).map(|_| r.gen_range(0.0..hi)).collect();
        v[0] = hi; // the maximum decides the rule
        let p = path(&d, "scaled.png");
        save_image(p.clone(), &Array::new(&v, dim4!(3, 5)));
        let back: Array<u8> = load_image_native(p.clone());
        let want: Vec<u8> = v.iter().map(|&x| (x as f32 * scale as f32) as u8).collect();
        assert_eq!(back.to_vec(), want, "maximum {hi}");
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn native_forms_keep_sixteen_bits_and_floats() {
    let d = dir("native");
    let mut r = Rng64::seed_from_u64(4);
    for (h, w) in SIZES {
        for c in [1u64, 3, 4] {
            let n = (h * w * c) as usize;
            let v: Vec<u16> = (0..n).map(|_| r.gen_range(0..=u16::MAX)).collect();
            for ext in ["png", "tif"] {
                let p = path(&d, &format!("deep_{h}x{w}x{c}.{ext}"));
                save_image_native(p.clone(), &Array::new(&v, dim4!(h, w, c)));
                let back: Array<u16> = load_image_native(p.clone());
                assert_eq!(back.dims(), dim4!(h, w, c), "{p}");
                assert_eq!(back.to_vec(), v, "{p}");
                // ArrayFire's reader keeps 16-bit values as they are stored, 0 to 65535
                let f: Array<f32> = load_image(p.clone(), c > 1);
                let want: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                assert_eq!(f.to_vec(), want, "{p}: load_image");
            }
        }
        let f: Vec<f32> = (0..(h * w * 3) as usize).map(|_| r.gen_range(-10.0..1000.0)).collect();
        let p = path(&d, &format!("float_{h}x{w}.tif"));
        save_image_native(p.clone(), &Array::new(&f, dim4!(h, w, 3)));
        let back: Array<f32> = load_image_native(p.clone());
        assert_eq!(back.to_vec(), f, "{p}");
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn jpeg_round_trip_is_close() {
    let d = dir("jpeg");
    let (h, w) = (67u64, 41u64);
    // a smooth image: JPEG keeps it within a few levels
    let mut v = Vec::new();
    for c in 0..3 {
        for x in 0..w {
            for y in 0..h {
                v.push(((y * 3 + x * 2 + c * 40) % 200 + 20) as f32);
            }
        }
    }
    let p = path(&d, "smooth.jpg");
    save_image(p.clone(), &Array::new(&v, dim4!(h, w, 3)));
    let back: Array<f32> = load_image(p.clone(), true);
    assert_eq!(back.dims(), dim4!(h, w, 3));
    let err: f32 =
        back.to_vec().iter().zip(&v).map(|(a, b)| (a - b).abs()).sum::<f32>() / v.len() as f32;
    assert!(err < 6.0, "mean error {err}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn failures_are_errors_that_name_the_path() {
    let d = dir("errors");
    let missing = path(&d, "missing.png");
    match try_load_image::<f32>(missing.clone(), true) {
        Err(Error::ImageFile { path, .. }) => assert_eq!(path, missing),
        other => panic!("missing file: {:?}", other.map(|a| a.dims())),
    }
    // corrupt files: random bytes, and a PNG cut short
    let mut r = Rng64::seed_from_u64(5);
    let junk = path(&d, "junk.png");
    std::fs::write(&junk, random_u8(&mut r, 300)).unwrap();
    let e = try_load_image_native::<u8>(junk.clone()).expect_err("junk is not an image");
    assert!(e.to_string().contains(&junk), "{e}");
    let good = path(&d, "good.png");
    save_image_native(good.clone(), &Array::new(&random_u8(&mut r, 300), dim4!(10, 10, 3)));
    let bytes = std::fs::read(&good).unwrap();
    let cut = path(&d, "cut.png");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(try_load_image::<f32>(cut.clone(), false).is_err());
    let empty = path(&d, "empty.bmp");
    std::fs::write(&empty, b"").unwrap();
    assert!(try_load_image::<u8>(empty, true).is_err());
    // what cannot be saved
    let img = Array::new(&[1u8; 12], dim4!(2, 2, 3));
    let e = try_save_image(path(&d, "out.xyz"), &img).unwrap_err();
    assert!(e.to_string().contains("out.xyz"), "{e}");
    let five = Array::new(&[1u8; 20], dim4!(2, 2, 5));
    assert!(try_save_image(path(&d, "five.png"), &five).is_err());
    let batch = Array::new(&[1u8; 8], dim4!(2, 2, 1, 2));
    assert!(try_save_image_native(path(&d, "batch.png"), &batch).is_err());
    let none = Array::<f32>::new_empty(dim4!(0, 3));
    assert!(try_save_image(path(&d, "none.png"), &none).is_err());
    let gray_f32 = Array::new(&[1.0f32; 4], dim4!(2, 2));
    assert!(try_save_image_native(path(&d, "gray.tif"), &gray_f32).is_err());
    assert!(try_save_image(path(&d, "no/such/dir/x.png"), &img).is_err());
    assert!(is_imageio_available());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
#[should_panic(expected = "load_image: image file")]
fn load_image_panics_naming_the_path() {
    let _: Array<f32> = load_image("/nonexistent/emberfire/picture.png".to_string(), true);
}

#[test]
#[should_panic(expected = "save_image_native: image file")]
fn save_image_native_panics_naming_the_path() {
    save_image_native("/nonexistent/dir/picture.png".to_string(), &Array::new(&[1u8], dim4!(1)));
}
