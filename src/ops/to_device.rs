//! Moving an array to another device of its backend, or to another backend.

use crate::array::Array;
use crate::backend::dense::Dense;
use crate::backend::{devices, peer, BackendKind};
use crate::device::{kind_of, with_active, Backend};
use crate::dtype::HasAfEnum;
use crate::error::{Error, Result};
use crate::error_handler::OrRaise;
use crate::jit::{Data, Node};

impl<T: HasAfEnum> Array<T> {
    /// The array on device `device` of its backend (the array API standard's `to_device`).
    ///
    /// On CUDA the elements are copied directly between the GPUs where they can reach each
    /// other (NVLink or PCIe peer-to-peer), through the host where they cannot. The copy is
    /// queued in stream order and the host does not wait: the new array is ready for the next
    /// operation on its device, and the source's device does not reuse the source's memory
    /// before the copy has read it. An array already on `device` is returned as it is (arrays
    /// are values: writing to either handle later does not change the other). Panics for a
    /// device that does not exist (see [`Array::try_to_device`]).
    ///
    /// ```
    /// use emberfire::{dim4, Array};
    /// let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    /// let last = emberfire::device_count() - 1;
    /// let b = a.to_device(last);
    /// assert_eq!(b.get_device_id(), last);
    /// assert_eq!(b.to_vec(), a.to_vec());
    /// ```
    pub fn to_device(&self, device: i32) -> Array<T> {
        self.try_to_device(device).or_raise("Array::to_device")
    }

    /// Like [`Array::to_device`], returning an error for a device that does not exist, or when
    /// the copy fails.
    ///
    /// ```
    /// use emberfire::{dim4, Array};
    /// let a = Array::new(&[1u8], dim4!(1));
    /// assert!(a.try_to_device(99).is_err());
    /// assert_eq!(a.try_to_device(0).unwrap().to_vec(), vec![1]);
    /// ```
    pub fn try_to_device(&self, device: i32) -> Result<Array<T>> {
        let node = self.node();
        match node.backend {
            BackendKind::Cpu => {
                if device != 0 {
                    return Err(Error::InvalidDevice { requested: device, count: 1 });
                }
                Ok(self.clone())
            }
            BackendKind::Cuda(from) => {
                let count = devices::cuda_device_count()? as i32;
                if device < 0 || device >= count {
                    return Err(Error::InvalidDevice { requested: device, count });
                }
                let to = device as usize;
                if to == from {
                    return Ok(self.clone());
                }
                let dense = Dense::of(node)?;
                let size = T::DTYPE.size();
                let bytes = self.elements() * size;
                let buf =
                    peer::copy_to_device(dense.data.buffer(), dense.data.offset * size, bytes, to)?;
                let dims = self.dims();
                let data = Data::dense(buf, dims);
                Ok(Array::from_node(Node::ready(T::DTYPE, dims, BackendKind::Cuda(to), data)))
            }
        }
    }
    /// The array on `backend` (a copy through the host, or the array itself when it already
    /// lives there): how an array moves between the CPU and a CUDA device, since operations
    /// never mix operands of two backends. On CUDA the array goes to this thread's CUDA
    /// device (see [`set_device`](crate::set_device) while CUDA is active). The elements are
    /// copied as they are stored (bool bytes included). Panics where `backend` is not
    /// available (see [`Array::try_to_backend`]).
    ///
    /// ```
    /// use emberfire::{dim4, Array, Backend};
    /// let a = Array::new(&[1.0f32, 2.0, 3.0], dim4!(3));
    /// let b = a.to_backend(Backend::CPU);
    /// assert_eq!(b.get_backend(), Backend::CPU);
    /// assert_eq!(b.to_vec(), vec![1.0, 2.0, 3.0]);
    /// ```
    pub fn to_backend(&self, backend: Backend) -> Array<T> {
        self.try_to_backend(backend).or_raise("Array::to_backend")
    }

    /// Like [`Array::to_backend`], returning an error where `backend` is not available or the
    /// copy fails.
    ///
    /// ```
    /// use emberfire::{dim4, Array, Backend};
    /// let a = Array::new(&[5u8, 6], dim4!(2));
    /// assert!(a.try_to_backend(Backend::OPENCL).is_err());
    /// match a.try_to_backend(Backend::CUDA) {
    ///     Ok(b) => assert_eq!((b.get_backend(), b.to_vec()), (Backend::CUDA, vec![5, 6])),
    ///     Err(e) => assert!(emberfire::get_available_backends() == [Backend::CPU], "{e}"),
    /// }
    /// ```
    pub fn try_to_backend(&self, backend: Backend) -> Result<Array<T>> {
        let to = kind_of(backend)?;
        let here = self.node().backend;
        if std::mem::discriminant(&to) == std::mem::discriminant(&here) {
            return Ok(self.clone());
        }
        let host = self.try_host_vec()?;
        let clean = self.node().has_clean_bools();
        let moved = with_active(to, || Array::<T>::try_from_host(host, self.dims()))?;
        if clean {
            moved.node().mark_clean_bools();
        }
        Ok(moved)
    }
}
