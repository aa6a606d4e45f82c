//! The working form of the image functions: a lazy value of one element type, with the
//! arithmetic written as operators so that a colour formula reads like the formula.
//!
//! Every operation builds a graph node of the value's own type (scalars are made in that
//! type, one-element operands broadcast), so a whole conversion stays one fused expression
//! until it is read.

use std::ops::{Add, Div, Mul, Sub};
use std::sync::Arc;

use crate::array::Array;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::jit::{BinOp, Expr, Node, UnOp};
use crate::ops::build::{broadcast_dims, cast_node, common_backend};
use crate::storage::Element;

/// A lazy value of one element type.
#[derive(Clone)]
pub(crate) struct Val(pub(crate) Arc<Node>);

impl Val {
    /// `a` converted to `to`.
    pub(crate) fn of<T: HasAfEnum>(a: &Array<T>, to: DType) -> Val {
        Val(cast_node(a.node(), to))
    }

    pub(crate) fn dtype(&self) -> DType {
        self.0.dtype
    }

    pub(crate) fn dims(&self) -> Dim4 {
        self.0.dims
    }

    /// The scalar `v` in this value's type, on its backend.
    pub(crate) fn k(&self, v: f64) -> Val {
        let one = Dim4::new(&[1, 1, 1, 1]);
        let h = f64::wrap(vec![v]).cast(self.dtype());
        Val(Node::lazy(self.dtype(), one, self.0.backend, Expr::Scalar(h)))
    }

    /// The index along dimension `dim` over shape `dims`, as a value of type `t` on this
    /// value's backend.
    pub(crate) fn index(&self, dims: Dim4, dim: u8, t: DType) -> Val {
        Val(Node::lazy(t, dims, self.0.backend, Expr::Range(dim)))
    }

    pub(crate) fn bin(&self, op: BinOp, other: &Val) -> Val {
        let backend = common_backend("image", &[&self.0, &other.0]);
        let dims = broadcast_dims("image", &[self.dims(), other.dims()], true);
        let t = self.dtype();
        let (a, b) = (self.0.clone(), cast_node(&other.0, t));
        Val(Node::lazy(op.out_type(t), dims, backend, Expr::Binary(op, a, b)))
    }

    pub(crate) fn max(&self, o: &Val) -> Val {
        self.bin(BinOp::Max, o)
    }
    pub(crate) fn min(&self, o: &Val) -> Val {
        self.bin(BinOp::Min, o)
    }
    pub(crate) fn lt(&self, o: &Val) -> Val {
        self.bin(BinOp::Lt, o)
    }
    pub(crate) fn ge(&self, o: &Val) -> Val {
        self.bin(BinOp::Ge, o)
    }
    pub(crate) fn and(&self, o: &Val) -> Val {
        self.bin(BinOp::And, o)
    }
    pub(crate) fn or(&self, o: &Val) -> Val {
        self.bin(BinOp::Or, o)
    }
    pub(crate) fn eq(&self, o: &Val) -> Val {
        self.bin(BinOp::Eq, o)
    }
    pub(crate) fn neq(&self, o: &Val) -> Val {
        self.bin(BinOp::Neq, o)
    }
    /// The remainder with the sign of the dividend, as C's `%`.
    pub(crate) fn rem(&self, o: &Val) -> Val {
        self.bin(BinOp::Rem, o)
    }

    pub(crate) fn unary(&self, op: UnOp) -> Val {
        let t = self.dtype();
        Val(Node::lazy(
            op.out_type(t),
            self.dims(),
            self.0.backend,
            Expr::Unary(op, self.0.clone()),
        ))
    }

    /// `cond ? a : b`, `cond` of any type (nonzero is true), the result of `a`'s type.
    pub(crate) fn select(cond: &Val, a: &Val, b: &Val) -> Val {
        let backend = common_backend("image", &[&cond.0, &a.0, &b.0]);
        let dims = broadcast_dims("image", &[cond.dims(), a.dims(), b.dims()], true);
        let t = a.dtype();
        let expr = Expr::Select(cast_node(&cond.0, DType::B8), a.0.clone(), cast_node(&b.0, t));
        Val(Node::lazy(t, dims, backend, expr))
    }

    pub(crate) fn cast(&self, to: DType) -> Val {
        Val(cast_node(&self.0, to))
    }

    /// The value as an array of `T` (converted if its type differs).
    pub(crate) fn array<T: HasAfEnum>(&self) -> Array<T> {
        Array::from_node(cast_node(&self.0, T::get_af_dtype()))
    }
}

macro_rules! val_op {
    ($trait:ident, $method:ident, $op:ident) => {
        impl $trait<&Val> for &Val {
            type Output = Val;
            fn $method(self, o: &Val) -> Val {
                self.bin(BinOp::$op, o)
            }
        }
        impl $trait<Val> for Val {
            type Output = Val;
            fn $method(self, o: Val) -> Val {
                self.bin(BinOp::$op, &o)
            }
        }
        impl $trait<Val> for &Val {
            type Output = Val;
            fn $method(self, o: Val) -> Val {
                self.bin(BinOp::$op, &o)
            }
        }
        impl $trait<&Val> for Val {
            type Output = Val;
            fn $method(self, o: &Val) -> Val {
                self.bin(BinOp::$op, o)
            }
        }
        impl $trait<f64> for &Val {
            type Output = Val;
            fn $method(self, o: f64) -> Val {
                self.bin(BinOp::$op, &self.k(o))
            }
        }
        impl $trait<f64> for Val {
            type Output = Val;
            fn $method(self, o: f64) -> Val {
                self.bin(BinOp::$op, &self.k(o))
            }
        }
    };
}

val_op!(Add, add, Add);
val_op!(Sub, sub, Sub);
val_op!(Mul, mul, Mul);
val_op!(Div, div, Div);

/// The type a colour conversion or a filter computes in for elements of type `t`: f64 for
/// f64, f32 otherwise (ArrayFire's rule for its image functions).
pub(crate) fn float_type(t: DType) -> DType {
    if t == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// Converts a result computed in a floating type back to `to`: rounded to nearest first
/// when `to` is an integer type (the cast itself truncates).
pub(crate) fn finish(v: Val, to: DType) -> Val {
    if v.dtype() == to {
        return v;
    }
    if to.is_integer() || to == DType::B8 {
        v.unary(UnOp::Round).cast(to)
    } else {
        v.cast(to)
    }
}
