//! ORB stub.
use super::features::Features;
use crate::array::Array;
use crate::dtype::{HasAfEnum, RealFloating};

/// ORB.
pub fn orb<T>(_input: &Array<T>, _fast_thr: f32, _max_feat: u32, _scl_fctr: f32, _levels: u32, _blur_img: bool) -> (Features, Array<u32>)
where
    T: HasAfEnum + RealFloating,
{
    unimplemented!()
}
