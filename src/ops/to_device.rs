//! Moving an array to another device of its backend.

use crate::array::Array;
use crate::backend::dense::Dense;
use crate::backend::{devices, peer, BackendKind};
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
}
