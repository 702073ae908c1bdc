//! Resource measurements beside timing: code size from the binary's symbols ([`codesize`]),
//! peak stack use by stack painting ([`stack`]), resident-set growth ([`rss`]) and heap in use
//! ([`heap`], for libraries that allocate with C `malloc`). Methods and
//! caveats are in docs/metrics.md.
pub mod codesize;
pub mod heap;
pub mod rss;
pub mod stack;
