//! Registration of the C++ DRACO implementations from `lwcbench-cpp`.
use crate::registry::Entry;

pub fn register(_r: &mut Vec<Entry>) {}
