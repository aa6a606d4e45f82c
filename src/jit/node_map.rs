//! Maps and sets keyed by a node's address, as the graph walks keep them.
//!
//! A walk looks a node up once or twice per node it visits, and the walk of a small program
//! runs on every operation a user evaluates; the standard library's default hasher (SipHash,
//! made to resist chosen keys) costs more there than the rest of the lookup. Addresses are not
//! chosen by anyone, so two multiply-and-fold rounds mix them well enough.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::Node;

/// A map from a node's address to `V`.
pub(crate) type NodeMap<V> = HashMap<*const Node, V, BuildHasherDefault<AddressHasher>>;

/// A set of node addresses.
pub(crate) type NodeSet = HashSet<*const Node, BuildHasherDefault<AddressHasher>>;

/// Hashes one address by two rounds of multiplying with an odd constant and folding the
/// well-mixed high bits down: the table picks buckets by the low bits, which one multiplication
/// alone leaves as regular as the addresses' alignment.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddressHasher(u64);

/// 2^64 divided by the golden ratio, made odd.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        // not reached for addresses (they come through `write_usize`); kept correct for any key
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(GOLDEN);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(GOLDEN);
    }

    fn finish(&self) -> u64 {
        let x = (self.0 ^ (self.0 >> 32)).wrapping_mul(GOLDEN);
        x ^ (x >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(addr: usize) -> u64 {
        BuildHasherDefault::<AddressHasher>::default().hash_one(addr as *const Node)
    }

    #[test]
    fn aligned_addresses_spread_over_the_low_bits() {
        // 64 nodes a fixed distance apart, as an allocator places them: their hashes' low 6
        // bits (the bucket of a 64-entry table) should hit as many of the 64 values as random
        // hashes would (about 40)
        for step in [16, 48, 128, 4096] {
            let buckets: HashSet<u64> =
                (0..64).map(|i| hash(0x7f00_0000_1000 + i * step) & 63).collect();
            assert!(buckets.len() >= 34, "{} buckets for step {step}", buckets.len());
        }
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m: NodeMap<usize> = NodeMap::default();
        for i in 0..1000usize {
            m.insert((i * 16) as *const Node, i);
        }
        assert!((0..1000usize).all(|i| m[&((i * 16) as *const Node)] == i));
        assert!(!m.contains_key(&(16_001 as *const Node)));
    }
}
