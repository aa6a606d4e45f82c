//! The operations a node of the expression graph can hold, and their result types.

use crate::dtype::DType;

/// Element-wise unary operations. A node's input has already been converted to the type the
/// operation computes in (the public functions insert casts), so each operation only needs to
/// be defined for the types listed in `supports`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum UnOp {
    Neg,
    Not,
    BitNot,
    Abs,
    Arg,
    Sign,
    Round,
    Trunc,
    Floor,
    Ceil,
    Sigmoid,
    Expm1,
    Erf,
    Erfc,
    Log10,
    Log1p,
    Log2,
    Cbrt,
    Tgamma,
    Lgamma,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Real,
    Imag,
    Conjg,
    Pow2,
    Factorial,
    IsZero,
    IsInf,
    IsNan,
}

/// Element-wise binary operations; both inputs have the same type when the node is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Mod,
    Pow,
    Root,
    Atan2,
    Hypot,
    Min,
    Max,
    Cplx2,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Neq,
    And,
    Or,
}

impl UnOp {
    /// The type of the result for an input of type `t`.
    pub(crate) fn out_type(self, t: DType) -> DType {
        use UnOp::*;
        match self {
            Not | IsZero | IsInf | IsNan => DType::B8,
            Abs | Arg | Real | Imag => t.real_of(),
            _ => t,
        }
    }

    /// Whether the operation is defined on inputs of type `t`.
    pub(crate) fn supports(self, t: DType) -> bool {
        use UnOp::*;
        match self {
            Neg | Not | IsZero | IsInf | IsNan => true,
            BitNot => t.is_integer() || t == DType::B8,
            Conjg => t.is_complex(),
            Abs | Arg | Real | Imag | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh
            | Asinh | Acosh | Atanh | Exp | Log | Sqrt | Rsqrt | Pow2 | Log10 | Log2 => {
                t.is_floating()
            }
            Sign | Round | Trunc | Floor | Ceil | Sigmoid | Expm1 | Erf | Erfc | Log1p | Cbrt
            | Tgamma | Lgamma | Factorial => t.is_real_float(),
        }
    }
}

impl BinOp {
    /// The type of the result for inputs of type `t`.
    pub(crate) fn out_type(self, t: DType) -> DType {
        use BinOp::*;
        match self {
            Lt | Gt | Le | Ge | Eq | Neq | And | Or => DType::B8,
            Cplx2 => t.complex_of(),
            _ => t,
        }
    }

    /// Whether the operation is defined on inputs of type `t`.
    pub(crate) fn supports(self, t: DType) -> bool {
        use BinOp::*;
        match self {
            Add | Sub | Mul | Div | Eq | Neq | And | Or | Pow | Min | Max | Lt | Gt | Le | Ge => {
                true
            }
            Rem | Mod | Atan2 | Hypot | Root => !t.is_complex(),
            Cplx2 => t.is_real_float(),
            BitAnd | BitOr | BitXor | Shl | Shr => t.is_integer() || t == DType::B8,
        }
    }
}
