//! GOOSE on the wire: a third-party dissector (Debian's tshark) decodes our plain frames as
//! GOOSE with the fields we encoded, and (as root) the veth run delivers every plain and every
//! sealed frame once, intact, with consecutive counters.
// Helpers outside #[test] functions unwrap too: a panic in a test is its failure report.
#![allow(clippy::unwrap_used)]
use std::process::Command;

use lwcbench_link::industrial::goose::frame::{pairs_for, Goose, SIZES};
use lwcbench_link::industrial::goose::{measure, pcap};

mod support;
use support::required;

fn tshark() -> Option<&'static str> {
    Command::new("tshark").arg("--version").output().ok().filter(|o| o.status.success()).map(|_| "tshark")
}

#[test]
fn tshark_decodes_our_frames_as_goose() {
    let Some(ts) = tshark() else {
        required::missing("tshark not installed (scripts/setup.sh --test installs it)");
        return;
    };
    // (size, stNum, sqNum, pairs): both study sizes, and counters in 1-, 2- and 3-byte BER forms.
    let cases: Vec<(usize, u32, u32, usize)> = vec![
        (160, 1, 0, pairs_for(160)),
        (160, 128, 200, pairs_for(160)),
        (1522, 70_000, 40_000, pairs_for(1522)),
        (400, 5, 127, 20),
    ];
    let frames: Vec<Vec<u8>> = cases
        .iter()
        .map(|&(size, st, sq, pairs)| Goose::trip(0x0101 + st as u16 % 7, st, sq, pairs).frame(size).unwrap())
        .collect();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("goose.pcap");
    std::fs::write(&file, pcap::pcap(&frames, 1_700_000_000_000_000)).unwrap();
    let o = Command::new(ts)
        .arg("-r")
        .arg(&file)
        .args(["-T", "fields", "-E", "separator=;", "-e", "vlan.etype", "-e", "goose.appid", "-e", "goose.gocbRef"])
        .args(["-e", "goose.stNum", "-e", "goose.sqNum", "-e", "goose.numDatSetEntries", "-e", "frame.len"])
        .args(["-e", "vlan.priority", "-e", "_ws.malformed", "-e", "_ws.expert.severity"])
        .output()
        .unwrap();
    assert!(o.status.success(), "tshark failed: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), frames.len(), "{text}");
    for (line, &(size, st, sq, pairs)) in lines.iter().zip(&cases) {
        let f: Vec<&str> = line.split(';').collect();
        let appid = 0x0101 + st as u16 % 7;
        assert_eq!(f[0], "0x88b8", "{line}");
        assert_eq!(f[1], format!("0x{appid:04x}"), "{line}");
        assert_eq!(f[2], "IED1PROT/LLN0$GO$gcbTrip01", "{line}");
        assert_eq!(f[3], st.to_string(), "{line}");
        assert_eq!(f[4], sq.to_string(), "{line}");
        assert_eq!(f[5], (2 * pairs + 1).to_string(), "{line}");
        assert_eq!(f[6], size.to_string(), "{line}");
        assert_eq!(f[7], "4", "{line}");
        assert_eq!(f[8], "", "tshark reports a malformed packet: {line}");
        assert_eq!(f[9], "", "tshark reports an expert warning: {line}");
    }
    // And as a display filter: every frame is GOOSE.
    let o = Command::new(ts).arg("-r").arg(&file).args(["-Y", "goose && !_ws.malformed"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), frames.len());
}

#[test]
fn veth_run_delivers_every_frame_once() {
    if let Err(e) = measure::check_privileges() {
        required::missing(&e);
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let master = lwcbench_link::wire::keys::MasterKey::random();
    let store = lwcbench_link::device::counter::CounterStore::open(&d.path().join("ctr"), 64, &master).unwrap();
    let v = measure::Veth::create().unwrap();
    let mut next = 0;
    for cipher in ["Ascon-AEAD128", "AES-128-GCM"] {
        let s = lwcbench_link::wire::suite::find(cipher).unwrap();
        for size in SIZES {
            let r = measure::run(&v, &s, &master, &store, size, 100, None).unwrap();
            assert_eq!((r.plain_ns.len(), r.sealed_ns.len()), (100, 100), "{cipher} {size}");
            assert_eq!(r.faults(), 0, "{cipher} {size}: {r:?}");
            assert_eq!(r.sealed_bytes, size + 16 + 16); // 16-byte v3 header, 16-byte tag
                                                        // one block of 64 per reservation: each run starts at a fresh block, never below the last
            assert!(r.first_counter >= next, "{cipher} {size}: counter {} reused (next {next})", r.first_counter);
            assert_eq!(r.last_counter - r.first_counter, (measure::WARMUP + 100 - 1) as u64);
            next = r.last_counter + 1;
        }
    }
}
