//! Cross-check of the own Xoodyak against an independent implementation, the `xoodyak`
//! crate (F. Denis), for AD and messages longer than the KATs' 32 bytes (several absorb and
//! squeeze blocks: R_kin = 44, R_kout = 24). The crate's `XoodyakKeyed::new(K, Some(N), None,
//! None)` absorbs K ‖ N ‖ |N| in one block, which is the final-round Xoodyak AEAD.
//! The test can fail: any difference in Xoodoo, padding or block boundaries changes the tag.
use lwcbench_core::Aead;
use lwcbench_lightweight::xoodyak::Xoodyak;
use xoodyak::XoodyakCommon as _;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

#[test]
fn matches_xoodyak_crate_on_long_inputs() {
    let key = pattern(16, 1);
    let nonce = pattern(16, 7);
    let mut ours = Xoodyak::default();
    ours.set_key(&key).unwrap();
    let mut n = 0;
    for ad_len in [0usize, 1, 43, 44, 45, 88, 89, 200] {
        // PT = 0 is left out: the crate skips Crypt for an empty message, while the
        // specification (and the KAT, Count 1…33) runs one empty Crypt block (Up(0x80), Down(ε)).
        for pt_len in [1usize, 23, 24, 25, 48, 49, 100, 1000] {
            let ad = pattern(ad_len, 3);
            let pt = pattern(pt_len, 5);
            let mut buf = pt.clone();
            let mut tag = [0u8; 16];
            ours.encrypt(&nonce, &ad, &mut buf, &mut tag).unwrap();

            let mut theirs = xoodyak::XoodyakKeyed::new(&key, Some(&nonce), None, None).unwrap();
            theirs.absorb(&ad);
            let mut want = pt.clone();
            let want_tag = theirs.aead_encrypt_in_place_detached(&mut want);
            assert_eq!(buf, want, "ciphertext, AD {ad_len} PT {pt_len}");
            assert_eq!(&tag[..], want_tag.as_ref(), "tag, AD {ad_len} PT {pt_len}");
            n += 1;
        }
    }
    assert_eq!(n, 64);
}
