//! What goes over the air: the frame, the cipher suites that protect it, and the keys.
pub mod compact;
pub mod frame;
pub mod gate;
pub mod keys;
pub mod suite;
pub mod video;
