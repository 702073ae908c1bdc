# The Rust workspaces of the tree, each with its own Cargo.lock (sourced by setup.sh, test.sh):
# setup.sh --test checks that each lock file is current, test.sh that each is formatted.
# crates/oscore/mcu-p256 is the bare-metal P-256 image its run.sh builds (docs/protocols.md).
RUST_WORKSPACES=(Cargo.toml python/Cargo.toml firmware/Cargo.toml mcu/images/Cargo.toml mcu/hostref/Cargo.toml
  crates/oscore/mcu-p256/Cargo.toml)
