//! The device family on CUDA: a device's context, stream and memory manager (`runtime.rs`),
//! opened on first use and kept for the process.

use super::{runtime, Cuda};
use crate::backend::devices::Devices;
use crate::error::Error;

impl Devices for Cuda {
    fn open_device(&self) -> Result<(), Error> {
        runtime::device(self.ordinal).map(|_| ())
    }

    fn sync_device(&self) -> Result<(), Error> {
        runtime::device(self.ordinal).and_then(|dev| dev.sync())
    }

    fn device_description(&self) -> (String, String, String, String) {
        match runtime::device(self.ordinal) {
            Ok(dev) => {
                let (major, minor) = dev.compute_capability();
                let driver = runtime::driver_version()
                    .map(|(a, b)| format!("CUDA driver {a}.{b}"))
                    .unwrap_or_else(|e| e.to_string());
                (
                    dev.name().to_string(),
                    "CUDA".to_string(),
                    format!("{driver}, {} GiB", dev.total_memory() >> 30),
                    format!("{major}.{minor}"),
                )
            }
            Err(e) => (e.to_string(), "CUDA".into(), String::new(), String::new()),
        }
    }

    fn device_memory_info(&self) -> (usize, usize, usize, usize) {
        runtime::device(self.ordinal).map(|dev| dev.memory().info()).unwrap_or((0, 0, 0, 0))
    }

    fn device_gc(&self) {
        if let Ok(dev) = runtime::device(self.ordinal) {
            dev.gc();
        }
    }
}
