//! How frames travel from the devices to the gateway.
pub mod broker;
