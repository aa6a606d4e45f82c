//! Building graph nodes for the public operations: type conversion to the type an operation
//! computes in, shape checking with broadcasting, and backend checks, in one place.

use std::sync::Arc;

use crate::array::Array;
use crate::backend::BackendKind;
use crate::dim4::Dim4;
use crate::dtype::{DType, HasAfEnum};
use crate::jit::{BinOp, Expr, Node, UnOp};

/// `node` converted to `to` (the node itself when the type already matches).
pub(crate) fn cast_node(node: &Arc<Node>, to: DType) -> Arc<Node> {
    if node.dtype == to {
        node.clone()
    } else {
        Node::lazy(to, node.dims, node.backend, Expr::Cast(node.clone()))
    }
}

/// The shape of an element-wise result. Equal sizes combine; a size of 1 broadcasts when
/// `batch` is set; a single-element operand (a scalar) broadcasts always.
pub(crate) fn broadcast_dims(func: &str, shapes: &[Dim4], batch: bool) -> Dim4 {
    // (an iterator, not a list: this runs for every element-wise operation a user writes)
    let mut real = shapes.iter().copied().filter(|d| d.elements() != 1);
    let Some(mut out) = real.next() else {
        return shapes[0];
    };
    for s in real {
        for k in 0..4 {
            if s[k] == out[k] {
                continue;
            }
            if batch && (s[k] == 1 || out[k] == 1) {
                out[k] = if out[k] == 1 { s[k] } else { out[k] };
            } else {
                let list: Vec<String> = shapes.iter().map(|d| d.to_string()).collect();
                if batch {
                    panic!(
                        "{func}: shapes {} do not broadcast: dimension {k} differs and neither \
                         size is 1",
                        list.join(" and ")
                    );
                }
                panic!(
                    "{func}: shapes {} differ; pass batch = true to broadcast dimensions of \
                     size 1",
                    list.join(" and ")
                );
            }
        }
    }
    out
}

/// The common backend of the operands; arrays of different backends or devices never mix.
pub(crate) fn common_backend(func: &str, nodes: &[&Arc<Node>]) -> BackendKind {
    let b = nodes[0].backend;
    for n in &nodes[1..] {
        if n.backend != b {
            mixed(func, b, n.backend);
        }
    }
    b
}

/// Runs `f` with the backend of `like` active. Operations that compute on the host build
/// their results (and the tables, ranges or constants they combine with the input) with
/// `Array::new`, `Array::new_empty`, `constant` and the like, which create arrays on the
/// thread's active backend. An input can live on another one (a DLPack import of host memory
/// is a CPU array while CUDA is active), and results follow their operands, as the lazy
/// operations' do.
pub(crate) fn with_backend_of<T: HasAfEnum, R>(like: &Array<T>, f: impl FnOnce() -> R) -> R {
    crate::device::with_active(like.node().backend, f)
}

/// The panic for operands of two backends or devices, saying how to move one.
fn mixed(func: &str, a: BackendKind, b: BackendKind) -> ! {
    let name = |k: BackendKind| match k {
        BackendKind::Cpu => "the CPU backend".to_string(),
        BackendKind::Cuda(d) => format!("CUDA device {d}"),
    };
    panic!(
        "{func}: operands live on {} and {}; emberfire never copies between them silently: \
         move one with `Array::to_backend` (between the CPU and CUDA) or `Array::to_device` \
         (between CUDA devices) first",
        name(a),
        name(b)
    )
}

/// The backend of an element-wise operation: that of its array operands, which must agree.
/// Scalar constants (values, not memory) take that backend (see [`on_backend`]), so that
/// `&a + 1.0` works for an array of any backend whichever one is active.
fn elementwise_backend(func: &str, nodes: &[&Arc<Node>]) -> BackendKind {
    // the usual case, without looking into any node
    if nodes.iter().all(|n| n.backend == nodes[0].backend) {
        return nodes[0].backend;
    }
    let mut arrays = nodes.iter().filter(|n| !is_constant(n));
    let Some(first) = arrays.next() else { return nodes[0].backend };
    for n in arrays {
        if n.backend != first.backend {
            mixed(func, first.backend, n.backend);
        }
    }
    first.backend
}

/// Whether `node` is a scalar constant, or a conversion of one (what a number becomes once it
/// is given a type): a value that can be made again on any backend.
fn is_constant(node: &Arc<Node>) -> bool {
    node.scalar_value().is_some() || node.cast_source().is_some_and(|x| x.scalar_value().is_some())
}

/// `node` on `backend`: the node itself, or a scalar constant made again there.
fn on_backend(node: &Arc<Node>, backend: BackendKind) -> Arc<Node> {
    if node.backend == backend {
        return node.clone();
    }
    let remake = |n: &Arc<Node>| {
        let v = n.scalar_value().expect("internal error: only constants change backend");
        Node::lazy(n.dtype, n.dims, backend, Expr::Scalar(v))
    };
    match node.cast_source() {
        Some(x) => Node::lazy(node.dtype, node.dims, backend, Expr::Cast(remake(&x))),
        None => remake(node),
    }
}

/// A float type wide enough for computing on `t`: f64 for 64-bit types, f32 otherwise.
fn float_for(t: DType) -> DType {
    match t {
        DType::F64 | DType::S64 | DType::U64 | DType::C64 => DType::F64,
        _ => DType::F32,
    }
}

/// Builds a unary operation returning `Array<O>`, choosing the type it computes in: the
/// input's type when the operation is defined on it with the right result, else the output
/// type, else a float type. Panics (naming `func`) for complex inputs the operation does not
/// accept.
pub(crate) fn unary<O: HasAfEnum>(func: &str, op: UnOp, input: &Arc<Node>) -> Array<O> {
    if let Some(p) = input.sparse() {
        panic!("{}", crate::jit::sparse::dense_only_message(func, p.format));
    }
    let (tin, tout) = (input.dtype, O::get_af_dtype());
    let compute = if op.supports(tin) && op.out_type(tin) == op.out_type(tout) {
        tin
    } else if tin.is_complex() {
        panic!("{func}: not defined for complex arrays (input is {})", tin.name())
    } else if op.supports(tout) {
        tout
    } else {
        float_for(tin)
    };
    if !op.supports(compute) {
        panic!("{func}: not defined for {} arrays", tin.name());
    }
    let x = cast_node(input, compute);
    let n = Node::lazy(op.out_type(compute), x.dims, x.backend, Expr::Unary(op, x));
    Array::from_node(cast_node(&n, tout))
}

/// Builds a binary operation computed in type `compute`, returning `Array<O>`.
pub(crate) fn binary<O: HasAfEnum>(
    func: &str,
    op: BinOp,
    lhs: &Arc<Node>,
    rhs: &Arc<Node>,
    compute: DType,
    batch: bool,
) -> Array<O> {
    let backend = elementwise_backend(func, &[lhs, rhs]);
    let (lhs, rhs) = (&on_backend(lhs, backend), &on_backend(rhs, backend));
    if lhs.sparse().is_some() || rhs.sparse().is_some() {
        let n = crate::ops::sparse::arith::binary(func, op, lhs, rhs, compute);
        if n.dtype != O::get_af_dtype() {
            panic!(
                "{func}: the result of sparse arithmetic is {}, not {}",
                n.dtype.name(),
                O::get_af_dtype().name()
            );
        }
        return Array::from_node(n);
    }
    let dims = broadcast_dims(func, &[lhs.dims, rhs.dims], batch);
    if !op.supports(compute) {
        panic!(
            "{func}: not defined for {} arrays (operands are {} and {})",
            compute.name(),
            lhs.dtype.name(),
            rhs.dtype.name()
        );
    }
    let (a, b) = (cast_node(lhs, compute), cast_node(rhs, compute));
    let n = Node::lazy(op.out_type(compute), dims, backend, Expr::Binary(op, a, b));
    Array::from_node(cast_node(&n, O::get_af_dtype()))
}

/// Builds `cond ? a : b` with broadcasting of size-1 dimensions and scalars.
pub(crate) fn select_nodes<T: HasAfEnum>(
    func: &str,
    cond: &Arc<Node>,
    a: &Arc<Node>,
    b: &Arc<Node>,
) -> Array<T> {
    let backend = elementwise_backend(func, &[cond, a, b]);
    let (cond, a, b) =
        (&on_backend(cond, backend), &on_backend(a, backend), &on_backend(b, backend));
    let dims = broadcast_dims(func, &[cond.dims, a.dims, b.dims], true);
    let t = T::get_af_dtype();
    let expr = Expr::Select(cast_node(cond, DType::B8), cast_node(a, t), cast_node(b, t));
    Array::from_node(Node::lazy(t, dims, backend, expr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dim4;
    use crate::jit::Expr;

    /// A lazy range on CUDA device 3: never evaluated, only combined with.
    fn on_cuda() -> Array<f32> {
        Array::from_node(Node::lazy(DType::F32, dim4!(4), BackendKind::Cuda(3), Expr::Range(0)))
    }

    #[test]
    fn arrays_of_two_backends_do_not_mix_and_the_message_says_how_to_move_one() {
        let cpu: Array<f32> =
            Array::from_node(Node::lazy(DType::F32, dim4!(4), BackendKind::Cpu, Expr::Range(0)));
        let err = std::panic::catch_unwind(|| crate::add(&cpu, &on_cuda(), false)).unwrap_err();
        let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.starts_with("add: operands live on the CPU backend and CUDA device 3"),
            "{msg}"
        );
        assert!(msg.contains("Array::to_backend") && msg.contains("Array::to_device"), "{msg}");
    }

    #[test]
    fn scalar_constants_take_the_backend_of_the_array_they_combine_with() {
        on_cpu(|| {
            let cpu = Array::new(&[1.0f32, 5.0, 3.0], dim4!(3));
            // a constant made while another backend was active (here: a CUDA device)
            let two = Array::<f32>::from_node(Node::lazy(
                DType::F32,
                dim4!(1),
                BackendKind::Cuda(3),
                Expr::Scalar(crate::storage::HostVec::F32(vec![2.0])),
            ));
            for sum in [crate::add(&cpu, &two, false), crate::add(&two, &cpu, false)] {
                assert_eq!(sum.node().backend, BackendKind::Cpu);
                assert_eq!(sum.to_vec(), vec![3.0, 7.0, 5.0]);
            }
            // a converted constant (an f64 made f32) moves too
            let half = Array::<f64>::from_node(Node::lazy(
                DType::F64,
                dim4!(1),
                BackendKind::Cuda(3),
                Expr::Scalar(crate::storage::HostVec::F64(vec![0.5])),
            ))
            .cast::<f32>();
            let prod = crate::mul(&half, &cpu, false);
            assert_eq!(prod.node().backend, BackendKind::Cpu);
            assert_eq!(prod.to_vec(), vec![0.5, 2.5, 1.5]);
            let cond = Array::new(&[true, false, true], dim4!(3));
            let picked = crate::select(&cpu, &cond, &two);
            assert_eq!(picked.node().backend, BackendKind::Cpu);
            assert_eq!(picked.to_vec(), vec![1.0, 2.0, 3.0]);
            // two arrays of another backend still do not mix
            let err = std::panic::catch_unwind(|| crate::mul(&cpu, &on_cuda(), true));
            assert!(err.is_err());
        })
    }

    /// Runs `f` with the CPU as this thread's active backend, so that the inputs a test makes
    /// with `Array::new` live on the CPU whatever backend the process would pick by default.
    fn on_cpu<R>(f: impl FnOnce() -> R) -> R {
        crate::device::with_active(BackendKind::Cpu, f)
    }

    /// Runs `f` with CUDA device 3 as this thread's active backend. No test here evaluates
    /// anything on it: an array made on the active backend instead of its input's fails (on a
    /// machine without that device) or shows in the result's backend.
    fn cuda_active<R>(f: impl FnOnce() -> R) -> R {
        crate::device::with_active(BackendKind::Cuda(3), f)
    }

    /// `got` is a CPU array holding what `want` holds.
    fn same<T: HasAfEnum + PartialEq + std::fmt::Debug>(
        what: &str,
        got: &Array<T>,
        want: &Array<T>,
    ) {
        assert_eq!(got.node().backend, BackendKind::Cpu, "{what}: the result left the CPU");
        assert_eq!(got.dims(), want.dims(), "{what}");
        assert_eq!(got.to_vec(), want.to_vec(), "{what}");
    }

    #[test]
    fn host_computed_statistics_and_matrices_follow_their_input() {
        on_cpu(|| {
            let a = Array::new(&[3.0f32, 1.0, 2.0, 9.0, 5.0, 7.0, 4.0, 8.0], dim4!(4, 2));
            same("median", &cuda_active(|| crate::median(&a, 0)), &crate::median(&a, 0));
            let (v, i) = cuda_active(|| crate::topk(&a, 2, 0, crate::TopkFn::MIN));
            let (wv, wi) = crate::topk(&a, 2, 0, crate::TopkFn::MIN);
            same("topk values", &v, &wv);
            same("topk indices", &i, &wi);
            let col = Array::new(&[1, 2, 3], dim4!(3));
            let m = Array::new(&[1, 2, 3, 4, 5, 6, 7, 8, 9], dim4!(3, 3));
            same(
                "diag_create",
                &cuda_active(|| crate::diag_create(&col, -1)),
                &crate::diag_create(&col, -1),
            );
            same(
                "diag_extract",
                &cuda_active(|| crate::diag_extract(&m, 1)),
                &crate::diag_extract(&m, 1),
            );
            same("lower", &cuda_active(|| crate::lower(&m, true)), &crate::lower(&m, true));
            same("upper", &cuda_active(|| crate::upper(&m, false)), &crate::upper(&m, false));
        })
    }

    #[test]
    fn sparse_arrays_made_from_an_array_follow_it() {
        on_cpu(|| {
            use crate::{sparse_convert_to, sparse_from_dense, sparse_to_dense, SparseFormat};
            let m = Array::new(&[1.0f32, 0.0, 0.0, 3.0, 2.0, 0.0], dim4!(2, 3));
            let zero = Array::new(&[0.0f32; 6], dim4!(2, 3));
            for (what, dense) in [("a matrix", &m), ("a zero matrix", &zero)] {
                for format in [SparseFormat::CSR, SparseFormat::CSC, SparseFormat::COO] {
                    let s = cuda_active(|| sparse_from_dense(dense, format));
                    assert_eq!(s.node().backend, BackendKind::Cpu, "{what} as {format:?}");
                    let back = cuda_active(|| sparse_to_dense(&s));
                    same(&format!("{what} as {format:?}"), &back, dense);
                    // converting sorts the coordinates by a permutation made on the way
                    let other = if format == SparseFormat::CSC {
                        SparseFormat::CSR
                    } else {
                        SparseFormat::CSC
                    };
                    let c = cuda_active(|| sparse_convert_to(&s, other));
                    same(&format!("{what}, {format:?} to {other:?}"), &sparse_to_dense(&c), dense);
                    // the sum of two sparse arrays builds its own offsets
                    let sum = cuda_active(|| crate::add(&s, &s, false));
                    assert_eq!(sum.node().backend, BackendKind::Cpu, "{what}: sum");
                    same(
                        &format!("{what}: sum"),
                        &sparse_to_dense(&sum),
                        &crate::add(dense, dense, false),
                    );
                }
            }
        })
    }

    #[test]
    fn image_and_vision_results_follow_their_input() {
        on_cpu(|| {
            let px: Vec<f32> = (0..64).map(|i| ((i * 37) % 11) as f32).collect();
            let img = Array::new(&px, dim4!(8, 8));
            let (gx, gy) = cuda_active(|| crate::sobel(&img, 3));
            let (wx, wy) = crate::sobel(&img, 3);
            same("sobel x", &gx, &wx);
            same("sobel y", &gy, &wy);
            let none = Array::<f32>::new_empty(dim4!(0, 4, 3));
            let g = cuda_active(|| crate::rgb2gray(&none, 0.3, 0.6, 0.1));
            same("rgb2gray of nothing", &g, &crate::rgb2gray(&none, 0.3, 0.6, 0.1));
            let r = cuda_active(|| crate::resize(&none, 2, 2, crate::InterpType::NEAREST));
            same("resize of nothing", &r, &crate::resize(&none, 2, 2, crate::InterpType::NEAREST));
            let mask = Array::new(&[true, false, true, true], dim4!(2, 2));
            let empty_mask = Array::<bool>::new_empty(dim4!(0, 2));
            let conn = crate::Connectivity::FOUR;
            let reg = |m: &Array<bool>| crate::regions::<f32>(m, conn);
            same("regions", &cuda_active(|| reg(&mask)), &reg(&mask));
            same("regions of nothing", &cuda_active(|| reg(&empty_mask)), &reg(&empty_mask));
            let cols = Array::new(&[1.0f32; 16], dim4!(4, 4));
            let wrap = |c: &Array<f32>| crate::wrap(c, 3, 3, 2, 2, 1, 1, 0, 0, true);
            same("wrap", &cuda_active(|| wrap(&cols)), &wrap(&cols));
            let tf = Array::new(&[1.0f32, 0.0, 2.0, 0.0, 1.0, 3.0, 0.0, 0.0, 1.0], dim4!(3, 3));
            let tc = |t: &Array<f32>| crate::transform_coords(t, 4.0, 5.0);
            same("transform_coords", &cuda_active(|| tc(&tf)), &tc(&tf));
            let (sx, sy) = (Array::new(&[2u32], dim4!(1)), Array::new(&[2u32], dim4!(1)));
            let cc = |i: &Array<f32>| crate::confidence_cc(i, &sx, &sy, 1, 2, 2, 1.0);
            same("confidence_cc", &cuda_active(|| cc(&img)), &cc(&img));
            same("dog", &cuda_active(|| crate::dog(&img, 1, 2)), &crate::dog(&img, 1, 2));
            let tpl = Array::new(&[20.0f32, 30.0, 40.0, 50.0], dim4!(2, 2));
            let mt = |i: &Array<f32>| crate::match_template(i, &tpl, crate::MatchType::SAD);
            same("match_template", &cuda_active(|| mt(&img)), &mt(&img));
            let f = cuda_active(|| crate::harris(&img, 10, 1e-4, 1.0, 0, 0.04));
            let w = crate::harris(&img, 10, 1e-4, 1.0, 0, 0.04);
            same("harris x", &f.xpos(), &w.xpos());
            same("harris scores", &f.score(), &w.score());
            let f = cuda_active(|| crate::fast(&img, 5.0, 9, true, 1.0, 3));
            let w = crate::fast(&img, 5.0, 9, true, 1.0, 3);
            same("fast y", &f.ypos(), &w.ypos());
            let train = Array::new(&[0.0f32, 0.0, 10.0, 0.0, 0.0, 10.0], dim4!(2, 3));
            let query = Array::new(&[9.0f32, 1.0, 1.0, 8.0], dim4!(2, 2));
            let nn =
                |q: &Array<f32>| crate::nearest_neighbour(q, &train, 0, 1, crate::MatchType::SSD);
            let ((i, d), (wi, wd)) = (cuda_active(|| nn(&query)), nn(&query));
            same("nearest_neighbour indices", &i, &wi);
            same("nearest_neighbour distances", &d, &wd);
            let xs = Array::new(&[0.0f32, 10.0, 10.0, 0.0, 5.0, 3.0], dim4!(6));
            let ys = Array::new(&[0.0f32, 0.0, 10.0, 10.0, 5.0, 8.0], dim4!(6));
            let (xd, yd) = (&xs + 5.0f32, &ys - 2.0f32);
            let hg = |x: &Array<f32>| {
                crate::homography::<f32>(x, &ys, &xd, &yd, crate::HomographyType::RANSAC, 0.5, 100)
            };
            let (h, inliers) = cuda_active(|| hg(&xs));
            assert_eq!((h.node().backend, inliers), (BackendKind::Cpu, 6));
            assert!((h.to_vec()[2] - 5.0).abs() < 1e-3, "{:?}", h.to_vec());
        })
    }

    #[test]
    fn factorisations_of_empty_and_inverted_matrices_follow_their_input() {
        on_cpu(|| {
            let a = Array::new(&[4.0f64, 2.0, 7.0, 6.0], dim4!(2, 2));
            let inv = |m: &Array<f64>| crate::inverse(m, crate::MatProp::NONE);
            same("inverse", &cuda_active(|| inv(&a)), &inv(&a));
            let tall = Array::<f64>::new_empty(dim4!(3, 0));
            let (q, r, tau) = cuda_active(|| crate::qr(&tall));
            let (wq, wr, wtau) = crate::qr(&tall);
            same("qr q", &q, &wq);
            same("qr r", &r, &wr);
            same("qr tau", &tau, &wtau);
            let (u, s, vt) = cuda_active(|| crate::svd(&tall));
            let (wu, ws, wvt) = crate::svd(&tall);
            same("svd u", &u, &wu);
            same("svd s", &s, &ws);
            same("svd vt", &vt, &wvt);
        })
    }
}
