//! The device family on the CPU: one device, always open, synchronous.

use super::Cpu;
use crate::backend::devices::Devices;
use crate::error::Error;

impl Devices for Cpu {
    fn open_device(&self) -> Result<(), Error> {
        Ok(())
    }

    fn sync_device(&self) -> Result<(), Error> {
        Ok(())
    }

    fn device_description(&self) -> (String, String, String, String) {
        (
            cpu_name(),
            "CPU".to_string(),
            format!("rayon, {} threads", rayon::current_num_threads()),
            std::env::consts::ARCH.to_string(),
        )
    }

    fn device_memory_info(&self) -> (usize, usize, usize, usize) {
        let (bytes, buffers) = super::host_table::counted();
        let (lbytes, lbuffers) = super::host_table::host_locked();
        (bytes, buffers, lbytes, lbuffers)
    }

    fn device_gc(&self) {
        crate::storage::cache::clear();
        super::fft::release_scratch();
    }
}

/// The CPU's model name from `/proc/cpuinfo`, else the architecture's name.
fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|n| n.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}
