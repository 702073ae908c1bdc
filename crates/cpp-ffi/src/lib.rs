//! C/C++ implementations behind the lwcbench traits.
