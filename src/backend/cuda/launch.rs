//! CUDA launch (in progress).
