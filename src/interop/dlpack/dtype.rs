//! Element types: emberfire's [`DType`] and DLPack's `DLDataType`, both ways.

use dlpack_ffi::{DLDataType, DLDataTypeCode};

use crate::dtype::DType;
use crate::error::{Error, Result};

/// DLPack's description of an element type of emberfire: complex numbers are one
/// `kDLComplex` element of both parts' bits, bool is `kDLBool` of 8 bits, bf16 is `kDLBfloat`
/// of 16 bits (PyTorch's `torch.bfloat16`, JAX's `jnp.bfloat16`).
///
/// ```
/// use emberfire::{dlpack, DType};
/// let t = dlpack::dl_data_type(DType::C32);
/// assert_eq!((t.code, t.bits, t.lanes), (5, 64, 1));
/// assert_eq!(dlpack::dtype_of(t), Ok(DType::C32));
/// let b = dlpack::dl_data_type(DType::BF16);
/// assert_eq!((b.code, b.bits, b.lanes), (4, 16, 1));
/// ```
pub fn dl_data_type(dtype: DType) -> DLDataType {
    let code = match dtype {
        DType::F16 | DType::F32 | DType::F64 => DLDataTypeCode::kDLFloat,
        DType::BF16 => DLDataTypeCode::kDLBfloat,
        DType::C32 | DType::C64 => DLDataTypeCode::kDLComplex,
        DType::B8 => DLDataTypeCode::kDLBool,
        DType::S16 | DType::S32 | DType::S64 => DLDataTypeCode::kDLInt,
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => DLDataTypeCode::kDLUInt,
    };
    DLDataType { code: code.0 as u8, bits: (dtype.size() * 8) as u8, lanes: 1 }
}

/// The emberfire element type a DLPack element type is, or [`Error::Exchange`] naming it when
/// emberfire has no such type (i8, float8, vectors of several lanes, unknown codes).
/// [`from_dlpack`](super::from_dlpack) still takes i8 tensors, as `Array<i16>`.
///
/// ```
/// use emberfire::{dlpack, DType};
/// let f16 = dlpack::ffi::DLDataType { code: 2, bits: 16, lanes: 1 };
/// assert_eq!(dlpack::dtype_of(f16), Ok(DType::F16));
/// let bf16 = dlpack::ffi::DLDataType { code: 4, bits: 16, lanes: 1 };
/// assert_eq!(dlpack::dtype_of(bf16), Ok(DType::BF16));
/// let fp8 = dlpack::ffi::DLDataType { code: 10, bits: 8, lanes: 1 };
/// assert!(dlpack::dtype_of(fp8).unwrap_err().to_string().contains("type code"));
/// ```
pub fn dtype_of(t: DLDataType) -> Result<DType> {
    let unsupported = |what: &str| {
        Err(Error::Exchange(format!(
            "dtype_of: emberfire has no element type for {what} (DLPack type code {}, {} bits, \
             {} lanes)",
            t.code, t.bits, t.lanes
        )))
    };
    if t.lanes != 1 {
        return unsupported("vectors of several lanes");
    }
    let code = DLDataTypeCode(t.code as u32);
    let dtype = match (code, t.bits) {
        (DLDataTypeCode::kDLFloat, 16) => DType::F16,
        (DLDataTypeCode::kDLFloat, 32) => DType::F32,
        (DLDataTypeCode::kDLFloat, 64) => DType::F64,
        (DLDataTypeCode::kDLComplex, 64) => DType::C32,
        (DLDataTypeCode::kDLComplex, 128) => DType::C64,
        (DLDataTypeCode::kDLBool, 8) => DType::B8,
        (DLDataTypeCode::kDLInt, 16) => DType::S16,
        (DLDataTypeCode::kDLInt, 32) => DType::S32,
        (DLDataTypeCode::kDLInt, 64) => DType::S64,
        (DLDataTypeCode::kDLUInt, 8) => DType::U8,
        (DLDataTypeCode::kDLUInt, 16) => DType::U16,
        (DLDataTypeCode::kDLUInt, 32) => DType::U32,
        (DLDataTypeCode::kDLUInt, 64) => DType::U64,
        (DLDataTypeCode::kDLBfloat, 16) => DType::BF16,
        (DLDataTypeCode::kDLBfloat, _) => return unsupported("bfloat of this width"),
        (DLDataTypeCode::kDLInt, 8) => return unsupported("signed 8-bit integers"),
        (DLDataTypeCode::kDLFloat | DLDataTypeCode::kDLComplex, _) => {
            return unsupported("floating point numbers of this width")
        }
        (DLDataTypeCode::kDLInt | DLDataTypeCode::kDLUInt | DLDataTypeCode::kDLBool, _) => {
            return unsupported("integers of this width")
        }
        _ => return unsupported("this type code"),
    };
    Ok(dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_maps_both_ways() {
        for d in DType::ALL {
            assert_eq!(dtype_of(dl_data_type(d)), Ok(d), "{d:?}");
        }
    }

    #[test]
    fn unknown_types_are_errors() {
        for (code, bits, lanes) in [(4, 32, 1), (0, 8, 1), (2, 32, 4), (8, 8, 1), (99, 32, 1)] {
            let e = dtype_of(DLDataType { code, bits, lanes }).unwrap_err();
            assert!(matches!(e, Error::Exchange(ref m) if m.starts_with("dtype_of")), "{e}");
        }
    }
}
