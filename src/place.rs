//! Where an array lives: a ground type that every layer names, from the graph's nodes to the
//! public operations. What each backend does is in `backend/`; this is only the tag.

/// The backend (and device) an array lives on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BackendKind {
    Cpu,
    /// A CUDA device, by ordinal.
    Cuda(usize),
}
