//! This crate's own EDHOC (src/edhoc/own.rs) against the traces of RFC 9529: Section 2
//! ("Authentication with Signatures, X.509 Certificates Identified by 'x5t'": method 0, cipher
//! suite 0, X25519 and Ed25519) value by value, then the whole handshake byte for byte; and
//! Section 3 ("Authentication with Static DH, CCS Identified by 'kid'": method 3, cipher
//! suite 2) likewise.
//!
//! The expected values are transcribed from the trace's text as the LAKE working group keeps
//! it (lake-wg/edhoc, draft-ietf-lake-traces.md, after "Updated trace #1/#2 (C_R authenticated
//! in message_2)", the text published as RFC 9529): each constant carries the trace's name.
//! Section 3's first message_1 and its error message (the suite negotiation) are not replayed:
//! the handshake starts at the second message_1, SUITES_I = [6, 2].
#![allow(clippy::unwrap_used)]

use lwcbench_oscore::edhoc::own::{
    messages, schedule, suites, Credential, EdhocSuite, Identity, Initiator, Method, Params, Responder,
};
use lwcbench_oscore::edhoc::Role;

fn h(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn h32(s: &str) -> [u8; 32] {
    h(s).try_into().unwrap()
}

// RFC 9529 Section 2 (method 0, cipher suite 0).
const X: &str = "892ec28e5cb6669108470539500b705e60d008d347c5817ee9f3327c8a87bb03";
const G_X: &str = "31f82c7b5b9cbbf0f194d913cc12ef1532d328ef32632a4881a1c0701e237f04";
const Y: &str = "e69c23fbf81bc435942446837fe827bf206c8fa10a39db47449e5a813421e1e8";
const G_Y: &str = "dc88d2d51da5ed67fc4616356bc8ca74ef9ebe8b387e623a360ba480b9b29d1c";
const SK_R: &str = "ef140ff900b0ab03f0c08d879cbbd4b31ea71e6e7ee7ffcb7e7955777a332799";
const PK_R: &str = "a1db47b95184854ad12a0c1a354e418aace33aa0f2c662c00b3ac55de92f9359";
const SK_I: &str = "4c5b25878f507c6b9dae68fbd4fd3ff997533db0af00b25d324ea28e6c213bc8";
const PK_I: &str = "ed06a8ae61a829ba5fa54525c9d07f48dd44a302f43e0f23d8cc20b73085141e";
const MESSAGE_1: &str = "0000582031f82c7b5b9cbbf0f194d913cc12ef1532d328ef32632a4881a1c0701e237f042d";
const TH_2: &str = "c6405c154c567466ab1df20369500e540e9f14bd3a796a0652cae66c9061688d";
const G_XY: &str = "e5cdf3a986cdac5b7bf04691e2b07c08e71f53998d8f842b7c3fb4d839cf7b28";
const PRK_2E: &str = "d584ac2e5dad5a77d14b53ebe72ef1d5daa8860d399373bf2c240afa7ba804da";
const ID_CRED_R: &str = "a11822822e4879f2a41b510c1f9b";
const CRED_R_DER: &str =
    "3081ee3081a1a003020102020462319ec4300506032b6570301d311b301906035504030c124544484f4320526f6f7420\
    45643235353139301e170d3232303331363038323433365a170d3239313233313233303030305a30223120301e060355\
    04030c174544484f4320526573706f6e6465722045643235353139302a300506032b6570032100a1db47b95184854ad1\
    2a0c1a354e418aace33aa0f2c662c00b3ac55de92f9359300506032b6570034100b723bc01eab0928e8b2b6c98de19cc\
    3823d46e7d6987b032478fecfaf14537a1af14cc8be829c6b73044101837eb4abc949565d86dce51cfae52ab82c152cb\
    02";
const CRED_R: &str = "58f13081ee3081a1a003020102020462319ec4300506032b6570301d311b301906035504030c124544484f4320526f6f\
    742045643235353139301e170d3232303331363038323433365a170d3239313233313233303030305a30223120301e06\
    035504030c174544484f4320526573706f6e6465722045643235353139302a300506032b6570032100a1db47b9518485\
    4ad12a0c1a354e418aace33aa0f2c662c00b3ac55de92f9359300506032b6570034100b723bc01eab0928e8b2b6c98de\
    19cc3823d46e7d6987b032478fecfaf14537a1af14cc8be829c6b73044101837eb4abc949565d86dce51cfae52ab82c1\
    52cb02";
const CONTEXT_2: &str =
    "4118a11822822e4879f2a41b510c1f9b5820c6405c154c567466ab1df20369500e540e9f14bd3a796a0652cae66c9061\
    688d58f13081ee3081a1a003020102020462319ec4300506032b6570301d311b301906035504030c124544484f432052\
    6f6f742045643235353139301e170d3232303331363038323433365a170d3239313233313233303030305a3022312030\
    1e06035504030c174544484f4320526573706f6e6465722045643235353139302a300506032b6570032100a1db47b951\
    84854ad12a0c1a354e418aace33aa0f2c662c00b3ac55de92f9359300506032b6570034100b723bc01eab0928e8b2b6c\
    98de19cc3823d46e7d6987b032478fecfaf14537a1af14cc8be829c6b73044101837eb4abc949565d86dce51cfae52ab\
    82c152cb02";
const MAC_2: &str = "862a7e5ef147f9a5f4c512e1b6623cd66cd17a7272072bfe5b602ffe307ee0e9";
const TO_BE_SIGNED_2: &str =
    "846a5369676e6174757265314ea11822822e4879f2a41b510c1f9b5901155820c6405c154c567466ab1df20369500e54\
    0e9f14bd3a796a0652cae66c9061688d58f13081ee3081a1a003020102020462319ec4300506032b6570301d311b3019\
    06035504030c124544484f4320526f6f742045643235353139301e170d3232303331363038323433365a170d32393132\
    33313233303030305a30223120301e06035504030c174544484f4320526573706f6e6465722045643235353139302a30\
    0506032b6570032100a1db47b95184854ad12a0c1a354e418aace33aa0f2c662c00b3ac55de92f9359300506032b6570\
    034100b723bc01eab0928e8b2b6c98de19cc3823d46e7d6987b032478fecfaf14537a1af14cc8be829c6b73044101837\
    eb4abc949565d86dce51cfae52ab82c152cb025820862a7e5ef147f9a5f4c512e1b6623cd66cd17a7272072bfe5b602f\
    fe307ee0e9";
const SIGNATURE_2: &str =
    "c3b5bd44d1e44a085c03d3aede4e1e6c11c572a1968cc3629b505f98c681608d3d1de793d1c40eb5dd5d89acf1966aea\
    07022b48cdc99870ebc40374e8fa6e09";
const PLAINTEXT_2: &str =
    "4118a11822822e4879f2a41b510c1f9b5840c3b5bd44d1e44a085c03d3aede4e1e6c11c572a1968cc3629b505f98c681\
    608d3d1de793d1c40eb5dd5d89acf1966aea07022b48cdc99870ebc40374e8fa6e09";
const KEYSTREAM_2: &str =
    "fd3e7c3f2d6bee643d3c9d2f2847035d73e2ecb0f8db5cd1c6854e24896af21188b2c4344e689ec2984283d9fbc69ce1\
    c5db10dcfff24df9a49a04a94058277bc7fa9ad6c6b194ab328b445eb080490cd786";
const CIPHERTEXT_2: &str =
    "bc26dd270fe9c02c44ce3934794b1cc62ba22f05459f8d358c8d12275ac42c5f96ded5f13cc9084e5b201889a45e5a60\
    a5562dc118619c3daa2fd9f4c9f4d6edad109dd4edf95962aafbaf9ab3f4a1f6b98f";
const MESSAGE_2: &str =
    "5872dc88d2d51da5ed67fc4616356bc8ca74ef9ebe8b387e623a360ba480b9b29d1cbc26dd270fe9c02c44ce3934794b\
    1cc62ba22f05459f8d358c8d12275ac42c5f96ded5f13cc9084e5b201889a45e5a60a5562dc118619c3daa2fd9f4c9f4\
    d6edad109dd4edf95962aafbaf9ab3f4a1f6b98f";
const TH_3: &str = "5b7df9b4f58f240ce0418e48191b5fff3a22b5ca57f669b16777996592e928bc";
const ID_CRED_I: &str = "a11822822e48c24ab2fd7643c79f";
const CRED_I_DER: &str =
    "3081ee3081a1a003020102020462319ea0300506032b6570301d311b301906035504030c124544484f4320526f6f7420\
    45643235353139301e170d3232303331363038323430305a170d3239313233313233303030305a30223120301e060355\
    04030c174544484f4320496e69746961746f722045643235353139302a300506032b6570032100ed06a8ae61a829ba5f\
    a54525c9d07f48dd44a302f43e0f23d8cc20b73085141e300506032b6570034100521241d8b3a770996bcfc9b9ead4e7\
    e0a1c0db353a3bdf2910b39275ae48b756015981850d27db6734e37f67212267dd05eeff27b9e7a813fa574b72a00b43\
    0b";
const CRED_I: &str = "58f13081ee3081a1a003020102020462319ea0300506032b6570301d311b301906035504030c124544484f4320526f6f\
    742045643235353139301e170d3232303331363038323430305a170d3239313233313233303030305a30223120301e06\
    035504030c174544484f4320496e69746961746f722045643235353139302a300506032b6570032100ed06a8ae61a829\
    ba5fa54525c9d07f48dd44a302f43e0f23d8cc20b73085141e300506032b6570034100521241d8b3a770996bcfc9b9ea\
    d4e7e0a1c0db353a3bdf2910b39275ae48b756015981850d27db6734e37f67212267dd05eeff27b9e7a813fa574b72a0\
    0b430b";
const MAC_3: &str = "39b127c130129afa30618c751329e637cc3734270d4b01258445a8ee02daa3bd";
const TO_BE_SIGNED_3: &str =
    "846a5369676e6174757265314ea11822822e48c24ab2fd7643c79f59011558205b7df9b4f58f240ce0418e48191b5fff\
    3a22b5ca57f669b16777996592e928bc58f13081ee3081a1a003020102020462319ea0300506032b6570301d311b3019\
    06035504030c124544484f4320526f6f742045643235353139301e170d3232303331363038323430305a170d32393132\
    33313233303030305a30223120301e06035504030c174544484f4320496e69746961746f722045643235353139302a30\
    0506032b6570032100ed06a8ae61a829ba5fa54525c9d07f48dd44a302f43e0f23d8cc20b73085141e300506032b6570\
    034100521241d8b3a770996bcfc9b9ead4e7e0a1c0db353a3bdf2910b39275ae48b756015981850d27db6734e37f6721\
    2267dd05eeff27b9e7a813fa574b72a00b430b582039b127c130129afa30618c751329e637cc3734270d4b01258445a8\
    ee02daa3bd";
const SIGNATURE_3: &str =
    "96e1cd5fceadfac1b5af819443f70924f5719955957fd02655beb4775e1a73186a0d1d3ea683f08f8d03dcecb9cf154e\
    1c6f555a1e12ca118ce42bdba6878907";
const PLAINTEXT_3: &str =
    "a11822822e48c24ab2fd7643c79f584096e1cd5fceadfac1b5af819443f70924f5719955957fd02655beb4775e1a7318\
    6a0d1d3ea683f08f8d03dcecb9cf154e1c6f555a1e12ca118ce42bdba6878907";
const A_3: &str = "8368456e6372797074304058205b7df9b4f58f240ce0418e48191b5fff3a22b5ca57f669b16777996592e928bc";
const K_3: &str = "da195e5f648ac63b0e8fb0c455205139";
const IV_3: &str = "38d8c64c56255affa449f4bed7";
const CIPHERTEXT_3: &str =
    "25c345884aaaeb22c527f9b1d2b6787207e0163c69b62a0d43928150427203c31674e4514ea6e383b566eb29763efeb0\
    afa518776ae1c65f856d84bf32af3a7836970466dcb71f76745d39d3025e7703e0c032ebad51947c";
const MESSAGE_3: &str =
    "585825c345884aaaeb22c527f9b1d2b6787207e0163c69b62a0d43928150427203c31674e4514ea6e383b566eb29763e\
    feb0afa518776ae1c65f856d84bf32af3a7836970466dcb71f76745d39d3025e7703e0c032ebad51947c";
const TH_4: &str = "0eb868f263cf3555dccd396dd8dec29d3750d599be42d5a41a5a37c896f294ac";
const A_4: &str = "8368456e6372797074304058200eb868f263cf3555dccd396dd8dec29d3750d599be42d5a41a5a37c896f294ac";
const K_4: &str = "df8cb5861e1fdfedd3b23015a39d1e2e";
const IV_4: &str = "128ec658d970d7380f74fc6c27";
const MESSAGE_4: &str = "484f0edee366e5c883";
const PRK_OUT: &str = "b744cb7d8a87cc0447c3350e165b250dab12ec453325abb922b30307e5c368f0";
const PRK_EXPORTER: &str = "2aaec8fc4ab3bc3295def6b551051a2fa561424db301fa84f642f5578a6df51a";
const MASTER_SECRET: &str = "1e1c6beac3a8a1cac435de7e2f9ae7ff";
const MASTER_SALT: &str = "ce7ab844c0106d73";
const KEY_UPDATE_CONTEXT: &str = "d6be169602b8bceaa01158fdb820890c";
const PRK_OUT_UPDATED: &str = "da6eacd9a985f4fba9aec2a9299022976b25b14e89fa159794f28d82faf2daad";
const PRK_EXPORTER_UPDATED: &str = "0014d2525ee0d8e213ea5908028e9a1ce9a01c30546f0930c044d38db5362c05";
const MASTER_SECRET_UPDATED: &str = "ee0ff542c47eb0e09c69307649bdbbe5";
const MASTER_SALT_UPDATED: &str = "80cede2a1e5aab48";

// RFC 9529 Section 3 (method 3, cipher suite 2), from message_1 sent the second time.
const S3_X: &str = "368ec1f69aeb659ba37d5a8d45b21bdc0299dceaa8ef235f3ca42ce3530f9525";
const S3_G_X: &str = "8af6f430ebe18d34184017a9a11bf511c8dff8f834730b96c1b7c8dbca2fc3b6";
const S3_Y: &str = "e2f4126777205e853b437d6eaca1e1f753cdcc3e2c69fa884b0a1a640977e418";
const S3_G_Y: &str = "419701d7f00a26c2dc587a36dd752549f33763c893422c8ea0f955a13a4ff5d5";
const S3_SK_R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";
const S3_SK_I: &str = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b";
const S3_CRED_R: &str =
    "a2026b6578616d706c652e65647508a101a501020241322001215820bbc34960526ea4d32e940cad2a234148ddc21791\
    a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c224c51eabf6072";
const S3_CRED_I: &str =
    "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3e50bfc\
    8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7d37ecb52a387d257\
    e6db3c2a93df21ff3affc8";
const S3_MESSAGE_1: &str = "0382060258208af6f430ebe18d34184017a9a11bf511c8dff8f834730b96c1b7c8dbca2fc3b637";
const S3_TH_2: &str = "356efd53771425e008f3fe3a86c83ff4c6b16e57028ff39d5236c182b202084b";
const S3_G_XY: &str = "2f0cb7e860ba538fbf5c8bded009f6259b4b628fe1eb7dbe9378e5ecf7a824ba";
const S3_PRK_2E: &str = "5aa0d69f3e3d1e0c479f0b8a486690c9802630c3466b1dc92371c982563170b5";
const S3_G_RX: &str = "f2b6eea02220b95eee5a0bc701f074e00a843ea02422f60825fb269b3e161423";
const S3_PRK_3E2M: &str = "0ca3d3398296b3c03900987620c11f6fce70781c1d1219720f9ec08c122d8434";
const S3_MAC_2: &str = "0943305c899f5c54";
const S3_PLAINTEXT_2: &str = "2732480943305c899f5c54";
const S3_KEYSTREAM_2: &str = "bf50e9e7bad0bb68173399";
const S3_MESSAGE_2: &str = "582b419701d7f00a26c2dc587a36dd752549f33763c893422c8ea0f955a13a4ff5d59862a1eef9e0e7e1886fcd";
const S3_TH_3: &str = "adaf67a78a4bcc91e018f8882762a722000b2507039df0bc1bbf0c161bb3155c";
const S3_G_IY: &str = "080f425085bc6249089eac8f108ea62326857e12ab07d72028ca1b5f36e004b3";
const S3_PRK_4E3M: &str = "81cc8a298e357044e3c466bb5c0a1e507e01d49238aeba138df94635407c0ff7";
const S3_MAC_3: &str = "623c91df41e34c2f";
const S3_PLAINTEXT_3: &str = "2b48623c91df41e34c2f";
const S3_K_3: &str = "8e7a30042000f7900e8174131f75f3ed";
const S3_IV_3: &str = "6d8300c1e23b56153ae70ee457";
const S3_MESSAGE_3: &str = "52e562097bc417dd5919485ac7891ffd90a9fc";
const S3_TH_4: &str = "c902b1e3a4326c93c5551f5f3aa6c5ecc0246806765612e52b5d99e6059d6b6e";
const S3_MESSAGE_4: &str = "4828c966b7ca304f83";
const S3_PRK_OUT: &str = "2c71afc1a9338a940bb3529ca734b886f30d1aba0b4dc51beeaeabdfea9ecbf8";
const S3_PRK_EXPORTER: &str = "e14d06699cee248c5a04bf9227bbcd4ce394de7dcb56db43555474171e6446db";
const S3_MASTER_SECRET: &str = "f9868f6a3aca78a05d1485b35030b162";
const S3_MASTER_SALT: &str = "ada24c7dbfc85eeb";
const S3_KEY_UPDATE_CONTEXT: &str = "a01158fdb820890cd6be169602b8bcea";
const S3_PRK_OUT_UPDATED: &str = "f979537743fe0bd6b9b141ddbd79656c52e6dc7c50ad807754d74d07e87d0d16";
const S3_MASTER_SECRET_UPDATED: &str = "49f72fac02b4658bda21e2dac66fc374";
const S3_MASTER_SALT_UPDATED: &str = "dd8b24f2aa9b011a";

// RFC 9529 §2: C_I = h'2d' (the integer -14), C_R = h'18' (the byte string 0x4118).
const C_I: [u8; 1] = [0x2d];
const C_R: [u8; 1] = [0x18];
// RFC 9529 §3: C_I = -24 (0x37), C_R = -8 (0x27).
const S3_C_I: [u8; 1] = [0x37];
const S3_C_R: [u8; 1] = [0x27];

#[test]
fn section_2_credentials_and_keys() {
    let cred_r = Credential::x509_x5t(&h(CRED_R_DER)).unwrap();
    assert_eq!(cred_r.id_cred(), h(ID_CRED_R), "ID_CRED_R (x5t: SHA-256/64 of the certificate)");
    assert_eq!(cred_r.cred(), h(CRED_R), "CRED_R (the certificate as a byte string)");
    assert_eq!(cred_r.public_key(), &h32(PK_R), "PK_R (from the certificate)");
    let cred_i = Credential::x509_x5t(&h(CRED_I_DER)).unwrap();
    assert_eq!(cred_i.id_cred(), h(ID_CRED_I), "ID_CRED_I");
    assert_eq!(cred_i.cred(), h(CRED_I), "CRED_I");
    assert_eq!(cred_i.public_key(), &h32(PK_I), "PK_I");
    assert_eq!(suites::ed25519_public(&h32(SK_R)), h32(PK_R));
    assert_eq!(suites::ed25519_public(&h32(SK_I)), h32(PK_I));
    let s0 = EdhocSuite::Suite0;
    assert_eq!(s0.public_key(&h32(X)).unwrap(), h32(G_X), "G_X");
    assert_eq!(s0.public_key(&h32(Y)).unwrap(), h32(G_Y), "G_Y");
    assert_eq!(*s0.ecdh(&h32(X), &h32(G_Y)).unwrap(), h32(G_XY), "G_XY (Initiator)");
    assert_eq!(*s0.ecdh(&h32(Y), &h32(G_X)).unwrap(), h32(G_XY), "G_XY (Responder)");
}

#[test]
fn section_2_intermediate_values() {
    let th_2 = schedule::th_2(&h(G_Y), &h(MESSAGE_1));
    assert_eq!(th_2, h32(TH_2), "TH_2");
    let prk_2e = schedule::prk_2e(&th_2, &h(G_XY));
    assert_eq!(*prk_2e, h32(PRK_2E), "PRK_2e");
    // The Responder signs: PRK_3e2m = PRK_2e.
    let prk_3e2m = schedule::prk_3e2m(&prk_2e, &th_2, None);
    assert_eq!(*prk_3e2m, h32(PRK_2E), "PRK_3e2m");
    // context_2 = << C_R, ID_CRED_R, TH_2, CRED_R >>, C_R encoded 0x4118.
    assert_eq!(h(CONTEXT_2), [&[0x41, 0x18][..], &h(ID_CRED_R), &[0x58, 0x20], &th_2, &h(CRED_R)].concat());
    let mac_2 = schedule::mac_2(&prk_3e2m, &[0x41, 0x18], &h(ID_CRED_R), &th_2, &h(CRED_R), &[], 32);
    assert_eq!(*mac_2, h(MAC_2), "MAC_2 (mac_length_2 = 32 with signatures)");
    let tbs_2 = schedule::to_be_signed(&h(ID_CRED_R), &th_2, &h(CRED_R), &[], &mac_2);
    assert_eq!(tbs_2, h(TO_BE_SIGNED_2), "Message to be signed 2");
    let sig_2 = suites::ed25519_sign(&h32(SK_R), &tbs_2);
    assert_eq!(sig_2.to_vec(), h(SIGNATURE_2), "Signature_or_MAC_2");
    assert!(suites::ed25519_verify(&h32(PK_R), &tbs_2, &sig_2).is_ok());
    let pt_2 = messages::plaintext_2(&C_R, &h(ID_CRED_R), &sig_2);
    assert_eq!(pt_2, h(PLAINTEXT_2), "PLAINTEXT_2");
    let ks_2 = schedule::keystream_2(&prk_2e, &th_2, pt_2.len()).unwrap();
    assert_eq!(*ks_2, h(KEYSTREAM_2), "KEYSTREAM_2");
    let ct_2: Vec<u8> = pt_2.iter().zip(ks_2.iter()).map(|(p, k)| p ^ k).collect();
    assert_eq!(ct_2, h(CIPHERTEXT_2), "CIPHERTEXT_2");
    assert_eq!(messages::message_2(&h(G_Y), &ct_2), h(MESSAGE_2), "message_2");

    let th_3 = schedule::th_next(&th_2, &pt_2, &h(CRED_R));
    assert_eq!(th_3, h32(TH_3), "TH_3");
    // The Initiator signs: PRK_4e3m = PRK_3e2m.
    let prk_4e3m = schedule::prk_4e3m(&prk_3e2m, &th_3, None);
    assert_eq!(*prk_4e3m, h32(PRK_2E), "PRK_4e3m");
    let mac_3 = schedule::mac_3(&prk_4e3m, &h(ID_CRED_I), &th_3, &h(CRED_I), &[], 32);
    assert_eq!(*mac_3, h(MAC_3), "MAC_3");
    let tbs_3 = schedule::to_be_signed(&h(ID_CRED_I), &th_3, &h(CRED_I), &[], &mac_3);
    assert_eq!(tbs_3, h(TO_BE_SIGNED_3), "Message to be signed 3");
    let sig_3 = suites::ed25519_sign(&h32(SK_I), &tbs_3);
    assert_eq!(sig_3.to_vec(), h(SIGNATURE_3), "Signature_or_MAC_3");
    let pt_3 = messages::plaintext_3(&h(ID_CRED_I), &sig_3);
    assert_eq!(pt_3, h(PLAINTEXT_3), "PLAINTEXT_3");
    let (k_3, iv_3, a_3) = schedule::aead_inputs(&prk_3e2m, &th_3, 3);
    assert_eq!((k_3.to_vec(), iv_3.to_vec(), a_3), (h(K_3), h(IV_3), h(A_3)), "K_3, IV_3, A_3");
    assert_eq!(messages::bstr_message(&h(CIPHERTEXT_3)), h(MESSAGE_3), "message_3");

    let th_4 = schedule::th_next(&th_3, &pt_3, &h(CRED_I));
    assert_eq!(th_4, h32(TH_4), "TH_4");
    let (k_4, iv_4, a_4) = schedule::aead_inputs(&prk_4e3m, &th_4, 8);
    assert_eq!((k_4.to_vec(), iv_4.to_vec(), a_4), (h(K_4), h(IV_4), h(A_4)), "K_4, IV_4, A_4");
    let prk_out = schedule::prk_out(&prk_4e3m, &th_4);
    assert_eq!(*prk_out, h32(PRK_OUT), "PRK_out");
    let prk_exporter = schedule::prk_exporter(&prk_out);
    assert_eq!(*prk_exporter, h32(PRK_EXPORTER), "PRK_exporter");
    assert_eq!(*schedule::kdf(&prk_exporter, 0, &[], 16).unwrap(), h(MASTER_SECRET), "OSCORE Master Secret");
    assert_eq!(*schedule::kdf(&prk_exporter, 1, &[], 8).unwrap(), h(MASTER_SALT), "OSCORE Master Salt");
    let updated = schedule::key_update(&prk_out, &h(KEY_UPDATE_CONTEXT));
    assert_eq!(*updated, h32(PRK_OUT_UPDATED), "PRK_out after KeyUpdate");
    assert_eq!(*schedule::prk_exporter(&updated), h32(PRK_EXPORTER_UPDATED), "PRK_exporter after KeyUpdate");
}

fn section_2_identities() -> (Identity, Identity, Credential, Credential) {
    let (cred_i, cred_r) =
        (Credential::x509_x5t(&h(CRED_I_DER)).unwrap(), Credential::x509_x5t(&h(CRED_R_DER)).unwrap());
    (Identity::new(&h(SK_I), cred_i.clone()).unwrap(), Identity::new(&h(SK_R), cred_r.clone()).unwrap(), cred_i, cred_r)
}

#[test]
fn section_2_handshake_byte_for_byte() {
    let (id_i, id_r, cred_i, cred_r) = section_2_identities();
    let pi = Params { suite: EdhocSuite::Suite0, method: Method::Signatures, own: &id_i, peer: &cred_r };
    let pr = Params { suite: EdhocSuite::Suite0, method: Method::Signatures, own: &id_r, peer: &cred_i };
    let (init, m1) = Initiator::start_with(&pi, &C_I, &[0], &h32(X)).unwrap();
    assert_eq!(m1, h(MESSAGE_1), "message_1");
    let (resp, m2) = Responder::process_message_1_with(&pr, &m1, &C_R, &h32(Y)).unwrap();
    assert_eq!((resp.c_i(), resp.c_r()), (&C_I[..], &C_R[..]));
    assert_eq!(m2, h(MESSAGE_2), "message_2");
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    assert_eq!(sent3.c_r(), C_R);
    assert_eq!(m3, h(MESSAGE_3), "message_3");
    let (mut est_r, m4) = resp.process_message_3(&m3).unwrap();
    assert_eq!(m4, h(MESSAGE_4), "message_4");
    let mut est_i = sent3.process_message_4(&m4).unwrap();
    assert_eq!((est_i.role(), est_r.role()), (Role::Initiator, Role::Responder));
    for est in [&est_i, &est_r] {
        assert_eq!(*est.exporter(0, &[], 16).unwrap(), h(MASTER_SECRET), "OSCORE Master Secret");
        assert_eq!(*est.exporter(1, &[], 8).unwrap(), h(MASTER_SALT), "OSCORE Master Salt");
    }
    // RFC 9529 §2.5 (OSCORE Parameters): the client's (Initiator's) Sender ID is 0x18, the
    // server's 0x2d.
    let (client, server) = (est_i.oscore_context().unwrap(), est_r.oscore_context().unwrap());
    assert_eq!((client.sender_id(), client.recipient_id()), (&[0x18][..], &[0x2d][..]));
    assert_eq!(client.sender_key(), server.recipient_key());
    assert_eq!(client.recipient_key(), server.sender_key());
    est_i.key_update(&h(KEY_UPDATE_CONTEXT)).unwrap();
    est_r.key_update(&h(KEY_UPDATE_CONTEXT)).unwrap();
    for est in [&est_i, &est_r] {
        assert_eq!(*est.exporter(0, &[], 16).unwrap(), h(MASTER_SECRET_UPDATED), "Master Secret after KeyUpdate");
        assert_eq!(*est.exporter(1, &[], 8).unwrap(), h(MASTER_SALT_UPDATED), "Master Salt after KeyUpdate");
    }
}

#[test]
fn section_3_intermediate_values() {
    let s2 = EdhocSuite::Suite2;
    assert_eq!(s2.public_key(&h32(S3_X)).unwrap(), h32(S3_G_X), "G_X");
    assert_eq!(s2.public_key(&h32(S3_Y)).unwrap(), h32(S3_G_Y), "G_Y");
    let cred_r = Credential::ccs_kid(&h(S3_CRED_R)).unwrap();
    let cred_i = Credential::ccs_kid(&h(S3_CRED_I)).unwrap();
    assert_eq!((cred_r.id_cred(), cred_i.id_cred()), (&h("a1044132")[..], &h("a104412b")[..]), "ID_CRED_R, ID_CRED_I");
    let g_xy = s2.ecdh(&h32(S3_X), &h32(S3_G_Y)).unwrap();
    assert_eq!(*g_xy, h32(S3_G_XY), "G_XY");
    let th_2 = schedule::th_2(&h(S3_G_Y), &h(S3_MESSAGE_1));
    assert_eq!(th_2, h32(S3_TH_2), "TH_2");
    let prk_2e = schedule::prk_2e(&th_2, &*g_xy);
    assert_eq!(*prk_2e, h32(S3_PRK_2E), "PRK_2e");
    let g_rx = s2.ecdh(&h32(S3_SK_R), &h32(S3_G_X)).unwrap();
    assert_eq!(*g_rx, h32(S3_G_RX), "G_RX (Responder)");
    assert_eq!(*s2.ecdh(&h32(S3_X), cred_r.public_key()).unwrap(), h32(S3_G_RX), "G_RX (Initiator)");
    let prk_3e2m = schedule::prk_3e2m(&prk_2e, &th_2, Some(&*g_rx));
    assert_eq!(*prk_3e2m, h32(S3_PRK_3E2M), "PRK_3e2m");
    let mac_2 = schedule::mac_2(&prk_3e2m, &S3_C_R, cred_r.id_cred(), &th_2, cred_r.cred(), &[], 8);
    assert_eq!(*mac_2, h(S3_MAC_2), "MAC_2");
    let pt_2 = messages::plaintext_2(&S3_C_R, cred_r.id_cred(), &mac_2);
    assert_eq!(pt_2, h(S3_PLAINTEXT_2), "PLAINTEXT_2 (ID_CRED_R as the compact kid 0x32)");
    assert_eq!(*schedule::keystream_2(&prk_2e, &th_2, 11).unwrap(), h(S3_KEYSTREAM_2), "KEYSTREAM_2");
    let th_3 = schedule::th_next(&th_2, &pt_2, cred_r.cred());
    assert_eq!(th_3, h32(S3_TH_3), "TH_3");
    let g_iy = s2.ecdh(&h32(S3_Y), cred_i.public_key()).unwrap();
    assert_eq!(*g_iy, h32(S3_G_IY), "G_IY");
    let prk_4e3m = schedule::prk_4e3m(&prk_3e2m, &th_3, Some(&*g_iy));
    assert_eq!(*prk_4e3m, h32(S3_PRK_4E3M), "PRK_4e3m");
    let mac_3 = schedule::mac_3(&prk_4e3m, cred_i.id_cred(), &th_3, cred_i.cred(), &[], 8);
    assert_eq!(*mac_3, h(S3_MAC_3), "MAC_3");
    let pt_3 = messages::plaintext_3(cred_i.id_cred(), &mac_3);
    assert_eq!(pt_3, h(S3_PLAINTEXT_3), "PLAINTEXT_3");
    let (k_3, iv_3, _) = schedule::aead_inputs(&prk_3e2m, &th_3, 3);
    assert_eq!((k_3.to_vec(), iv_3.to_vec()), (h(S3_K_3), h(S3_IV_3)), "K_3, IV_3");
    let th_4 = schedule::th_next(&th_3, &pt_3, cred_i.cred());
    assert_eq!(th_4, h32(S3_TH_4), "TH_4");
    let prk_out = schedule::prk_out(&prk_4e3m, &th_4);
    assert_eq!(*prk_out, h32(S3_PRK_OUT), "PRK_out");
    assert_eq!(*schedule::prk_exporter(&prk_out), h32(S3_PRK_EXPORTER), "PRK_exporter");
    assert_eq!(
        *schedule::key_update(&prk_out, &h(S3_KEY_UPDATE_CONTEXT)),
        h32(S3_PRK_OUT_UPDATED),
        "PRK_out after KeyUpdate"
    );
}

#[test]
fn section_3_handshake_byte_for_byte() {
    let (cred_i, cred_r) = (Credential::ccs_kid(&h(S3_CRED_I)).unwrap(), Credential::ccs_kid(&h(S3_CRED_R)).unwrap());
    let id_i = Identity::new(&h(S3_SK_I), cred_i.clone()).unwrap();
    let id_r = Identity::new(&h(S3_SK_R), cred_r.clone()).unwrap();
    let pi = Params { suite: EdhocSuite::Suite2, method: Method::StaticDh, own: &id_i, peer: &cred_r };
    let pr = Params { suite: EdhocSuite::Suite2, method: Method::StaticDh, own: &id_r, peer: &cred_i };
    let (init, m1) = Initiator::start_with(&pi, &S3_C_I, &[6, 2], &h32(S3_X)).unwrap();
    assert_eq!(m1, h(S3_MESSAGE_1), "message_1 (second time)");
    let (resp, m2) = Responder::process_message_1_with(&pr, &m1, &S3_C_R, &h32(S3_Y)).unwrap();
    assert_eq!(m2, h(S3_MESSAGE_2), "message_2");
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    assert_eq!(m3, h(S3_MESSAGE_3), "message_3");
    let (mut est_r, m4) = resp.process_message_3(&m3).unwrap();
    assert_eq!(m4, h(S3_MESSAGE_4), "message_4");
    let mut est_i = sent3.process_message_4(&m4).unwrap();
    for est in [&est_i, &est_r] {
        assert_eq!(*est.exporter(0, &[], 16).unwrap(), h(S3_MASTER_SECRET), "OSCORE Master Secret");
        assert_eq!(*est.exporter(1, &[], 8).unwrap(), h(S3_MASTER_SALT), "OSCORE Master Salt");
    }
    let client = est_i.oscore_context().unwrap();
    assert_eq!((client.sender_id(), client.recipient_id()), (&S3_C_R[..], &S3_C_I[..]));
    est_i.key_update(&h(S3_KEY_UPDATE_CONTEXT)).unwrap();
    est_r.key_update(&h(S3_KEY_UPDATE_CONTEXT)).unwrap();
    for est in [&est_i, &est_r] {
        assert_eq!(*est.exporter(0, &[], 16).unwrap(), h(S3_MASTER_SECRET_UPDATED), "Master Secret after KeyUpdate");
        assert_eq!(*est.exporter(1, &[], 8).unwrap(), h(S3_MASTER_SALT_UPDATED), "Master Salt after KeyUpdate");
    }
}

/// Every one-bit change of the trace's message_2 (at the Initiator) and message_3 (at the
/// Responder) is refused, each at its own step.
#[test]
fn section_2_every_flipped_bit_is_refused() {
    let (id_i, id_r, cred_i, cred_r) = section_2_identities();
    let pi = Params { suite: EdhocSuite::Suite0, method: Method::Signatures, own: &id_i, peer: &cred_r };
    let pr = Params { suite: EdhocSuite::Suite0, method: Method::Signatures, own: &id_r, peer: &cred_i };
    let m2 = h(MESSAGE_2);
    for bit in 0..m2.len() * 8 {
        let (init, _) = Initiator::start_with(&pi, &C_I, &[0], &h32(X)).unwrap();
        let mut m = m2.clone();
        m[bit / 8] ^= 1 << (bit % 8);
        let e = init.process_message_2(&m).unwrap_err();
        assert_eq!(e.step(), "message_2", "bit {bit}: {e}");
    }
    let m3 = h(MESSAGE_3);
    for bit in 0..m3.len() * 8 {
        let (resp, _) = Responder::process_message_1_with(&pr, &h(MESSAGE_1), &C_R, &h32(Y)).unwrap();
        let mut m = m3.clone();
        m[bit / 8] ^= 1 << (bit % 8);
        let e = resp.process_message_3(&m).unwrap_err();
        assert_eq!(e.step(), "message_3", "bit {bit}: {e}");
    }
}
