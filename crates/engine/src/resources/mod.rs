//! Resource measurements beside timing: code size from the binary's symbols ([`codesize`]),
//! peak stack use by stack painting ([`stack`]) and resident-set growth ([`rss`]). Methods and
//! caveats are in docs/metrics.md.
pub mod codesize;
pub mod rss;
pub mod stack;
