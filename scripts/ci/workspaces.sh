# The Rust workspaces of the tree, each with its own Cargo.lock (sourced by setup.sh, test.sh).
RUST_WORKSPACES=(Cargo.toml python/Cargo.toml firmware/Cargo.toml mcu/images/Cargo.toml mcu/hostref/Cargo.toml)
