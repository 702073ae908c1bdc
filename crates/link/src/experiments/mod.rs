//! Experiments on the path: attacks, overload, faults, network conditions.
pub mod attack;
pub mod chaos;
pub mod netcond;
pub mod overload;
pub mod sweep;
pub mod video;
