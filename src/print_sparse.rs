//! Printing a sparse array as ArrayFire does: a name line, the storage format, the dense
//! shape, then the values, row indices and column indices, each printed as an array whose
//! name is the matrix's followed by `: Values`, `: RowIdx` and `: ColIdx`.

use crate::backend::download;
use crate::error_handler::OrRaise;
use crate::jit::sparse::{SparseFormat, SparseParts};
use crate::print_format::format_array;
use crate::storage::with_vec;

/// The text of sparse `parts` of dense shape `dims` under `name` (ArrayFire's "No Name Sparse
/// Array" when it is empty), with `precision` digits for floating values.
pub(crate) fn format_sparse(
    name: &str,
    dims: [u64; 4],
    p: &SparseParts,
    precision: usize,
) -> String {
    let name = if name.is_empty() { "No Name Sparse Array" } else { name };
    let format = match p.format {
        SparseFormat::CSR => "AF_STORAGE_CSR",
        SparseFormat::CSC => "AF_STORAGE_CSC",
        SparseFormat::COO => "AF_STORAGE_COO",
        SparseFormat::DENSE => "AF_STORAGE_DENSE",
    };
    let mut out = format!(
        "{name}\nStorage Format : {format}\n[{} {} {} {}]\n",
        dims[0], dims[1], dims[2], dims[3]
    );
    for (node, label) in [(&p.values, "Values"), (&p.rows, "RowIdx"), (&p.cols, "ColIdx")] {
        let h = download(&node.eval(), node.dims, node.dtype).or_raise("printing a sparse array");
        let part_dims = *node.dims.get();
        let text = with_vec!(&h, v, E => format_array(&format!("{name}: {label}"), part_dims, v, precision));
        out.push_str(&text);
    }
    out
}
