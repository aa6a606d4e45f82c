//! Template matching: the disparity between a template and the window of the image that
//! starts at each pixel, as a sum over the template's pixels of shifted reads of the image.
//!
//! The template is small and read once to the host: its values become scalars of the
//! element-wise passes (kernel arguments, so one compiled kernel serves every template
//! pixel), and the sum is evaluated every few terms to keep each pass small.

use super::MatchType;
use crate::array::Array;
use crate::dtype::{DType, HasAfEnum, ImageFilterType};
use crate::jit::UnOp;
use crate::ops::build::with_backend_of;
use crate::ops::image::calc::Val;
use crate::ops::movement::{offset_read, BorderType};

/// How many template pixels one fused pass adds.
const TERMS_PER_PASS: usize = 16;

/// The sum over the template's pixels `(i, j)` of `term(read of the image shifted by
/// (i, j), template value)`, evaluated every few terms.
fn window_sum(
    s: &Array<f32>,
    s64: Option<&Array<f64>>,
    tpl: &[(i64, i64, f64)],
    ty: DType,
    term: &dyn Fn(&Val, f64) -> Val,
) -> Val {
    let mut acc: Option<Val> = None;
    for (n, &(i, j, v)) in tpl.iter().enumerate() {
        let read = match s64 {
            Some(s) => Val::of(&offset_read(s, s.dims(), [i, j, 0, 0], BorderType::ZERO), ty),
            None => Val::of(&offset_read(s, s.dims(), [i, j, 0, 0], BorderType::ZERO), ty),
        };
        let t = term(&read, v);
        acc = Some(match acc {
            Some(a) => a + t,
            None => t,
        });
        if (n + 1) % TERMS_PER_PASS == 0 {
            let a = acc.take().expect("set");
            acc = Some(if ty == DType::F64 {
                let done = a.array::<f64>();
                done.eval();
                Val::of(&done, ty)
            } else {
                let done = a.array::<f32>();
                done.eval();
                Val::of(&done, ty)
            });
        }
    }
    acc.expect("a template has pixels")
}

/// The disparity between `template_img` and the window of `search_img` that starts (top
/// left) at each pixel, read as 0 beyond the image: the result has the search image's
/// shape, and its smallest values mark the best matches. Dimensions 2 and 3 of the search
/// image are batches; the template is one 2D image.
///
/// With `t` the template, `w` the window, `mt` and `mw` their means, the disparities are
/// `SAD = sum |w - t|`, `ZSAD = sum |w - mw - t + mt|`, `LSAD = sum |w - (mw / mt) t|`,
/// and `SSD`, `ZSSD`, `LSSD` with squares in place of absolute values, as in ArrayFire.
/// `NCC`, `ZNCC` and `SHD` are not template disparities (arrayfire-rust refuses them too).
///
/// f32 for every input type but f64, which gives f64.
///
/// ```
/// use emberfire::{dim4, imin_all, match_template, Array, MatchType};
/// let mut px: Vec<f32> = (0..64).map(|i| ((i * 37) % 11) as f32).collect();
/// let tpl: Vec<f32> = vec![20.0, 30.0, 40.0, 50.0];
/// // plant the 2 x 2 template at row 3, column 5 of an 8 x 8 image
/// for (k, &v) in tpl.iter().enumerate() { px[(3 + k % 2) + 8 * (5 + k / 2)] = v; }
/// let img = Array::new(&px, dim4!(8, 8));
/// let d = match_template(&img, &Array::new(&tpl, dim4!(2, 2)), MatchType::SAD);
/// let (best, _, at) = imin_all(&d);
/// assert_eq!((best, at), (0.0, 3 + 8 * 5));
/// ```
///
/// Panics if `mtype` is `NCC`, `ZNCC` or `SHD`, if the template is not 2D or is larger
/// than the search image.
pub fn match_template<T>(
    search_img: &Array<T>,
    template_img: &Array<T>,
    mtype: MatchType,
) -> Array<T::AbsOutType>
where
    T: HasAfEnum + ImageFilterType,
    T::AbsOutType: HasAfEnum,
{
    // what is computed on the host and uploaded lands on the input's backend
    with_backend_of(search_img, || {
        const FUNC: &str = "match_template";
        assert!(
            !matches!(mtype, MatchType::NCC | MatchType::ZNCC | MatchType::SHD),
            "{FUNC}: `mtype` {mtype:?} is not supported; use SAD, ZSAD, LSAD, SSD, ZSSD or LSSD"
        );
        let (sd, td) = (search_img.dims(), template_img.dims());
        assert!(
            td[2] == 1 && td[3] == 1,
            "{FUNC}: `template_img` must be one 2D image, but its dims are {td}"
        );
        assert!(
            td[0] <= sd[0] && td[1] <= sd[1],
            "{FUNC}: `template_img` (dims {td}) must not be larger than `search_img` (dims {sd})"
        );
        let out_ty = T::AbsOutType::get_af_dtype();
        if sd.elements() == 0 || td.elements() == 0 {
            return search_img.cast();
        }
        let ty = if out_ty == DType::F64 { DType::F64 } else { DType::F32 };
        let values: Vec<f64> = template_img.cast::<f64>().to_vec();
        let rows = td[0] as usize;
        let tpl: Vec<(i64, i64, f64)> = values
            .iter()
            .enumerate()
            .map(|(k, &v)| ((k % rows) as i64, (k / rows) as i64, v))
            .collect();
        let n = tpl.len() as f64;
        let (s32, s64): (Array<f32>, Option<Array<f64>>) = if ty == DType::F64 {
            (Array::new_empty(crate::dim4!(0)), Some(search_img.cast()))
        } else {
            (search_img.cast(), None)
        };
        match &s64 {
            Some(s) => s.eval(),
            None => s32.eval(),
        }
        let sum_of =
            |term: &dyn Fn(&Val, f64) -> Val| window_sum(&s32, s64.as_ref(), &tpl, ty, term);
        let t_mean = values.iter().sum::<f64>() / n;
        let needs_mean =
            matches!(mtype, MatchType::ZSAD | MatchType::ZSSD | MatchType::LSAD | MatchType::LSSD);
        let w_mean = if needs_mean { Some(sum_of(&|w, _| w.clone()) / n) } else { None };
        let abs = |v: Val| v.unary(UnOp::Abs);
        let sq = |v: Val| &v * &v;
        let out = match mtype {
            MatchType::SAD => sum_of(&|w, t| abs(w - t)),
            MatchType::SSD => sum_of(&|w, t| sq(w - t)),
            MatchType::ZSAD | MatchType::ZSSD => {
                let wm = w_mean.expect("computed");
                let square = mtype == MatchType::ZSSD;
                sum_of(&|w, t| {
                    let e = (w - &wm) + (t_mean - t);
                    if square {
                        sq(e)
                    } else {
                        abs(e)
                    }
                })
            }
            _ => {
                let scale = w_mean.expect("computed") / t_mean;
                let square = mtype == MatchType::LSSD;
                sum_of(&|w, t| {
                    let e = w - &(&scale * t);
                    if square {
                        sq(e)
                    } else {
                        abs(e)
                    }
                })
            }
        };
        out.array()
    })
}
