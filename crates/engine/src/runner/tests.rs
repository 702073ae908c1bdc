use super::ops::*;
use super::*;
use crate::plan::{expand, Payload, Scenario, Selection};
#[allow(unused_imports)]
use lwcbench_catalog::Make;
#[allow(unused_imports)]
use lwcbench_core::{Aead, BlockCipher, CipherMode, StreamCipher};

#[test]
fn rounds_spread_every_group_over_the_run() {
    let sel = Selection {
        ciphers: vec!["ChaCha20".into()],
        scenarios: vec![Scenario::Full],
        sizes_bits: vec![64, 128],
        kivs: vec![crate::plan::Kiv::parse("ss").unwrap()],
        ..Default::default()
    };
    let groups = expand(&sel).unwrap();
    assert_eq!(groups.len(), 2);
    let cfg = Config { reps: 6, warmup: 1, min_sample_ns: 1.0, ..Default::default() };
    let clusters: Vec<Vec<&Group>> = groups.iter().map(|g| vec![g]).collect();
    let mut order = Vec::new();
    let rs = measure_rounds(&clusters, &cfg, 3, |g| order.push(g.size_bits)).unwrap();
    // round 0: warm-up + 2 of 64, then 3 of 128; round 1 reversed: 2 of 128, 2 of 64; round 2: 2 + 2
    assert_eq!(order, [64, 64, 64, 128, 128, 128, 128, 128, 64, 64, 64, 64, 128, 128]);
    assert!(rs.iter().all(|c| c[0].samples.len() == 6 && c[0].warmup.len() == 1));
}

#[test]
fn planted_slowdown_runs_ten_percent_more_operations() {
    assert_eq!(planted_slowdown("rust-ref~slow10"), Some(10));
    assert_eq!(planted_slowdown("rust-ref~twin"), None);
    assert_eq!(planted_slowdown("rust-ref"), None);
    // count the inner operations: 100 outer runs → 110 inner runs (hand count: every 10th twice)
    struct Count(std::rc::Rc<std::cell::Cell<u64>>);
    impl Op for Count {
        fn prepare(&mut self, _: &[u8], _: &[u8]) -> Result<(), CipherError> {
            Ok(())
        }
        fn run(&mut self) -> Result<(), CipherError> {
            self.0.set(self.0.get() + 1);
            Ok(())
        }
    }
    let n = std::rc::Rc::new(std::cell::Cell::new(0));
    let mut p = Planted { inner: Box::new(Count(n.clone())), every: 10, n: 0 };
    for _ in 0..100 {
        p.run().unwrap();
    }
    assert_eq!(n.get(), 110);
}

#[test]
fn interleaved_groups_alternate_and_keep_their_counts() {
    let sel = Selection {
        ciphers: vec!["ChaCha20".into()],
        scenarios: vec![Scenario::Full],
        sizes_bits: vec![64],
        kivs: vec![crate::plan::Kiv::parse("ss").unwrap()],
        payloads: vec![Payload::dataset("t", vec![0xAB; 8]), Payload::random()],
        ..Default::default()
    };
    let groups = expand(&sel).unwrap();
    assert_eq!(groups.len(), 2);
    let cfg = Config { reps: 3, warmup: 2, min_sample_ns: 1.0, ..Default::default() };
    let refs: Vec<&Group> = groups.iter().collect();
    let mut order = Vec::new();
    let rs = measure_interleaved(&refs, &cfg, |g| order.push(g.payload.label.clone())).unwrap();
    // 5 samples each, taken in turn: A B A B …
    assert_eq!(order.len(), 10);
    for (i, l) in order.iter().enumerate() {
        assert_eq!(l, &groups[i % 2].payload.label, "sample {i}");
    }
    for (r, g) in rs.iter().zip(&groups) {
        assert_eq!(r.group.payload.label, g.payload.label);
        assert_eq!((r.samples.len(), r.warmup.len()), (3, 2));
        assert!(r.samples.iter().all(|s| s.ns > 0.0));
    }
}

/// Every (key, nonce) an AEAD encrypted under, in order.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(Vec<u8>, Vec<u8>)>>>;

/// An AEAD that records every (key, nonce) it encrypts under, around a real one.
struct Recording {
    inner: Box<dyn Aead + Send>,
    key: Vec<u8>,
    seen: Seen,
}

impl Aead for Recording {
    fn info(&self) -> lwcbench_core::CipherInfo {
        self.inner.info()
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), lwcbench_core::CipherError> {
        self.key = key.to_vec();
        self.inner.set_key(key)
    }
    fn encrypt(
        &mut self,
        n: &[u8],
        ad: &[u8],
        buf: &mut [u8],
        tag: &mut [u8],
    ) -> Result<(), lwcbench_core::CipherError> {
        self.seen.lock().unwrap().push((self.key.clone(), n.to_vec()));
        self.inner.encrypt(n, ad, buf, tag)
    }
    fn decrypt(&mut self, n: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), lwcbench_core::CipherError> {
        self.inner.decrypt(n, ad, buf, tag)
    }
}

/// The AEAD encrypt and decrypt groups never encrypt twice under one (key, nonce): not across
/// the samples of the fixed key/IV variant (each prepared with the same key and IV), nor across
/// the groups sharing the default key. Failed before: every encrypt of a sample used the IV as
/// the nonce (one pair for all of them).
#[test]
fn aead_groups_never_reuse_a_key_and_nonce() {
    let seen: Seen = Default::default();
    let mut expected = 0;
    for scenario in [Scenario::Encrypt, Scenario::Decrypt] {
        let sel = Selection {
            ciphers: vec!["ChaCha20-Poly1305".into()],
            scenarios: vec![scenario],
            sizes_bits: vec![64, 128],
            kivs: vec![crate::plan::Kiv::parse("ss").unwrap()],
            ..Default::default()
        };
        for g in expand(&sel).unwrap() {
            let Some(Make::Aead(mk)) = g.entry.make else { panic!("{}: an AEAD", g.label()) };
            let rec = Recording { inner: mk(), key: Vec::new(), seen: seen.clone() };
            let mut op = AeadOp::new(&g, Box::new(rec), vec![9u8; g.size_bits / 8]);
            let (key, iv) = ([3u8; 32], [5u8; 12]);
            // encrypt: 4 samples × 3 calls; decrypt: one encrypt per sample (its ciphertext)
            expected += if scenario == Scenario::Encrypt { 4 * 3 } else { 4 };
            for _sample in 0..4 {
                op.prepare(&key, &iv).unwrap();
                for _ in 0..3 {
                    op.run().unwrap();
                }
            }
        }
    }
    let seen = seen.lock().unwrap();
    assert!(expected >= 2 * 4 * 3 + 2 * 4, "two sizes per scenario at least");
    assert_eq!(seen.len(), expected);
    let distinct: std::collections::HashSet<_> = seen.iter().collect();
    assert_eq!(distinct.len(), seen.len(), "a (key, nonce) pair repeated");
}
