//! The RFC 9529 §3 static keys and credentials the EDHOC tests and the cost example share (each
//! uses a part of them).
#![allow(dead_code)]

/// Bytes from hex.
pub fn h(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

// RFC 9529 Section 3: P-256 static keys and CCS credentials ('kid' 0x2b and 0x32).
pub const SK_I: &str = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b";
pub const SK_R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";
pub const CRED_I: &str = "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3\
                          e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7\
                          d37ecb52a387d257e6db3c2a93df21ff3affc8";
pub const CRED_R: &str = "a2026b6578616d706c652e65647508a101a501020241322001215820bbc34960526ea4d32e940cad2a234148dd\
                          c21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c22\
                          4c51eabf6072";
