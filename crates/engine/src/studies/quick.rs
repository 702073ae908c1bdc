//! The smoke test: ChaCha20 and ChaCha20-Poly1305 in every scenario; no tables of its own.
use super::study::Study;
use crate::plan::Selection;

/// The preset name.
pub const NAME: &str = "quick";

/// The smoke-test preset.
pub struct Quick;

impl Study for Quick {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "ChaCha20 and ChaCha20-Poly1305, every scenario, 20 repetitions: a smoke test of the whole tool in about a second"
    }
    fn selection(&self) -> Selection {
        Selection { ciphers: vec!["ChaCha20".into(), "ChaCha20-Poly1305".into()], ..Default::default() }
    }
    fn reps(&self) -> usize {
        20
    }
    fn warmup(&self) -> usize {
        3
    }
}
