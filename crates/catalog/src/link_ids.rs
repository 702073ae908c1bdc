//! The stable cipher numbers of the link's frame (`lwcbench link`; the frame's byte 1,
//! docs/link.md "Ciphers"): a fact about an entry, read with [`crate::Entry::link_id`]. Old
//! frames and stores name ciphers by these numbers: never renumber, only add. AEADs are used
//! as they are; stream ciphers get the link's stream + Poly1305 composition (crates/link
//! `wire/suite.rs`). A leaf module: it names entries by id and imports nothing.

/// (number, "cipher/implementation"), in the order the link offers them (a bare cipher name
/// selects the first of its implementations here).
pub const LINK_IDS: &[(u8, &str)] = &[
    (1, "Ascon-AEAD128/rustcrypto"),
    (2, "Ascon-128/rustcrypto"),
    (3, "AES-128-CCM/rustcrypto"),
    (4, "AES-128-GCM/rustcrypto"),
    (5, "AES-128-CCM/openssl"),
    (6, "AES-128-GCM/openssl"),
    (7, "AES-128-CCM/gcrypt"),
    (8, "AES-128-GCM/gcrypt"),
    (9, "AES-128-CCM/wolfssl"),
    (10, "AES-128-GCM/wolfssl"),
    (11, "ChaCha20-Poly1305/rustcrypto"),
    (12, "ChaCha20-Poly1305/openssl"),
    (13, "TinyJAMBU-128/rust-ref"),
    (14, "Xoodyak/rust-ref"),
    (15, "SCHWAEMM256-128/rust-ref"),
    (16, "Grain-128AEADv2/rust-ref"),
    (17, "AES-128-OCB/rustcrypto"),
    (18, "AES-128-EAX/rustcrypto"),
    // nonce-misuse-resistant (docs/security.md "When counter state cannot be guaranteed")
    (19, "AES-128-GCM-SIV/rustcrypto"),
    (20, "AES-256-GCM-SIV/rustcrypto"),
    (21, "XChaCha20-Poly1305/rustcrypto"),
    (32, "DRACO/rust-fast"),
    (33, "DRACO/rust-ref"),
    (34, "DRACO/cpp-fast"),
    (35, "Trivium/rust"),
    (36, "Grain-128a/rust"),
    (37, "ChaCha20/rustcrypto"),
    (38, "Grain-v1/rust"),
    (39, "MICKEY-2.0/rust"),
    (40, "MICKEY-128-2.0/rust"),
    (41, "Sosemanuk/rust"),
    (42, "HC-128/rust"),
    (43, "Rabbit/rustcrypto"),
    (44, "Salsa20-128/rustcrypto"),
    (45, "Salsa20/rustcrypto"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers are unique, every id names a registered stream cipher or AEAD (native libraries
    /// are always built here), and a few numbers are as docs/link.md "Ciphers" publishes them.
    #[test]
    fn link_numbers_are_unique_registered_and_published() {
        let reg = crate::registry();
        let mut nums: Vec<u8> = LINK_IDS.iter().map(|&(n, _)| n).collect();
        nums.sort_unstable();
        nums.dedup();
        assert_eq!(nums.len(), LINK_IDS.len(), "a link number is used twice");
        for &(n, id) in LINK_IDS {
            let e = reg.iter().find(|e| e.id() == id).unwrap_or_else(|| panic!("link {n}: {id} is not registered"));
            assert!(
                matches!(e.info.family, lwcbench_core::Family::Aead | lwcbench_core::Family::Stream),
                "link {n}: {id} is neither an AEAD nor a stream cipher"
            );
            assert_eq!(e.link_id(), Some(n));
        }
        let by = |n: u8| LINK_IDS.iter().find(|&&(k, _)| k == n).map(|&(_, id)| id);
        assert_eq!(by(1), Some("Ascon-AEAD128/rustcrypto"));
        assert_eq!(by(32), Some("DRACO/rust-fast"));
        assert_eq!(by(45), Some("Salsa20/rustcrypto"));
        assert_eq!(by(19), Some("AES-128-GCM-SIV/rustcrypto"));
        assert_eq!(by(20), Some("AES-256-GCM-SIV/rustcrypto"));
        assert_eq!(by(21), Some("XChaCha20-Poly1305/rustcrypto"));
        assert_eq!(crate::find("AES-128-ECB/rustcrypto").and_then(|e| e.link_id()), None);
    }
}
