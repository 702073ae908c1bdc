//! `lwcbench link --video`: bad options (one `error:` line, nothing written), and camera → server
//! runs over MQTT (embedded broker) and UDP, with `--loss` in network namespaces as root, where
//! every frame sent is delivered or lost whole and every dropped part is accounted for.
use super::link_netcond::{each_one_error_line, is_root, lwcbench};
use super::required;
use std::path::Path;

/// A 320×240 4:2:0 clip (115,200 B a frame) of `frames` frames of pseudo-random bytes.
fn clip(dir: &Path, frames: usize) -> std::path::PathBuf {
    let mut y = b"YUV4MPEG2 W320 H240 F25:1 Ip A1:1 C420jpeg\n".to_vec();
    let mut x = 0x1234_5678u32;
    for _ in 0..frames {
        y.extend_from_slice(b"FRAME\n");
        for _ in 0..115_200 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            y.push(x as u8);
        }
    }
    let p = dir.join("clip.y4m");
    std::fs::write(&p, y).unwrap();
    p
}

fn rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    r.records().map(|x| h.iter().zip(x.unwrap().iter()).map(|(a, b)| (a.into(), b.into())).collect()).collect()
}

fn num(r: &std::collections::HashMap<String, String>, k: &str) -> u64 {
    r[k].parse().unwrap_or_else(|_| panic!("{k} = {}", r[k]))
}

#[test]
fn bad_video_options_get_one_error_line() {
    let d = tempfile::tempdir().unwrap();
    clip(d.path(), 1);
    std::fs::write(d.path().join("not.y4m"), b"RIFF....WAVEfmt ").unwrap();
    // One 2400×2400 4:4:4 frame: 17,280,000 B, above the 16 MiB video frame limit.
    let mut big = b"YUV4MPEG2 W2400 H2400 F25:1 C444\nFRAME\n".to_vec();
    big.resize(big.len() + 17_280_000, 0);
    std::fs::write(d.path().join("big.y4m"), big).unwrap();
    // Key [7; 32] (fingerprint as in device/counter.rs's tests) with its counter state and a
    // video replay state whose counter is not a number.
    let k = d.path().join("k");
    std::fs::write(&k, format!("lwcbench-link-master-key v1\n{}\n", "07".repeat(32))).unwrap();
    std::fs::set_permissions(&k, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let fp = "key 32f4fc68107ab4dd67b987d1614f906b";
    std::fs::write(d.path().join("k.counters"), format!("lwcbench-link-counters v2\n{fp}\n")).unwrap();
    std::fs::write(d.path().join("k.video-replay"), format!("lwcbench-video-replay v1\n{fp}\ndevice 0 accepted x\n"))
        .unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["--video", "clip.y4m", "--fps", "0"], "error: --fps: 0 is not in (0, 1000] frames/s"),
        (&["--video", "clip.y4m", "--frames", "0"], "error: --frames: 0: at least one frame is needed"),
        (
            &["--video", "clip.y4m", "--transport", "udp", "--frame-part-bytes", "44"],
            "error: --frame-part-bytes 44: a part needs more than its 28-byte header and 16-byte tag (44 B)",
        ),
        (
            &["--video", "clip.y4m", "--transport", "udp", "--frame-part-bytes", "65508"],
            "error: --frame-part-bytes 65508: above the largest UDP payload",
        ),
        // 115,200 parts of one byte: more than the 16-bit part count
        (&["--video", "clip.y4m", "--frame-part-bytes", "45"], "error: --frame-part-bytes 45: a 115200-byte frame"),
        (&["--video", "not.y4m"], "error: not.y4m"),
        (&["--video", "big.y4m"], "error: video frame of 17280000 bytes: outside the 1..=16777216 byte limit"),
        (
            &["--video", "clip.y4m", "--loss", "5"],
            "error: --video: network conditions (--loss, …) apply with --transport udp only",
        ),
        (
            &["--video", "clip.y4m", "--key-file", "k"],
            "error: video replay state k.video-replay: line 3: accepted counter is not a number in 0..2^63",
        ),
    ];
    each_one_error_line(d.path(), &cases);
}

/// Over MQTT a 115,200-byte frame fits one 262,144-byte message: 115,200 + 28 + 16 = 115,244 B.
#[test]
fn mqtt_delivers_every_frame_bit_for_bit() {
    let d = tempfile::tempdir().unwrap();
    clip(d.path(), 6);
    let o = lwcbench(
        &["link", "-o", "out", "--video", "clip.y4m", "--fps", "50", "--cipher", "Ascon-AEAD128,ChaCha20-Poly1305"],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.path().join("out");
    let f = rows(&out.join("video_frames.csv"));
    assert_eq!(f.len(), 12);
    for r in &f {
        assert_eq!(r["status"], "delivered", "{r:?}");
        assert_eq!((num(r, "parts"), num(r, "parts_received")), (1, 1));
        assert_eq!((num(r, "payload_bytes"), num(r, "wire_bytes"), num(r, "overhead_bytes")), (115_200, 115_244, 44));
        assert!(!r["latency_us"].is_empty());
    }
    let s = rows(&out.join("link_video.csv"));
    assert_eq!(s.len(), 2);
    for r in &s {
        assert_eq!((num(r, "frames_sent"), num(r, "delivered"), num(r, "lost"), num(r, "mismatched")), (6, 6, 0, 0));
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Video over the link"));
}

/// `--video` without a file takes the bundled clip, or the one $LWCBENCH_VIDEO names.
#[test]
fn video_without_a_file_takes_the_default_clip() {
    let d = tempfile::tempdir().unwrap();
    let c = clip(d.path(), 2);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_lwcbench"))
        .args(["link", "-o", "out", "--video", "--fps", "50"])
        .env("LWCBENCH_VIDEO", &c)
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = &rows(&d.path().join("out/link_video.csv"))[0];
    assert_eq!((num(s, "frames_sent"), num(s, "delivered"), num(s, "width")), (2, 2, 320));
}

/// Over UDP in 1,472-byte datagrams a 115,200-byte frame is 81 parts (hand count in
/// crates/link/src/wire/video.rs): 118,764 B on the wire, 3,564 B of it headers and tags.
/// With `--loss 5` (root: network namespaces) a frame is delivered exactly when all 81 parts
/// arrived, sent = delivered + lost, and the parts that did not arrive are the drops the
/// loss mechanism counted plus those the server's socket counted (its buffer overflowed).
#[test]
fn udp_with_loss_loses_frames_whole_and_accounts_for_every_part() {
    let d = tempfile::tempdir().unwrap();
    clip(d.path(), 8);
    let o = lwcbench(&["link", "-o", "plain", "--video", "clip.y4m", "--transport", "udp", "--fps", "50"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut missing = 0;
    for r in rows(&d.path().join("plain/video_frames.csv")) {
        assert_eq!(num(&r, "parts"), 81);
        assert_eq!((num(&r, "wire_bytes"), num(&r, "overhead_bytes")), (118_764, 3_564));
        // Loopback loses nothing, unless a busy machine lets the server's socket buffer overflow.
        let got = num(&r, "parts_received");
        assert_eq!(r["status"] == "delivered", got == 81, "{r:?}");
        missing += 81 - got;
    }
    let s = &rows(&d.path().join("plain/link_video.csv"))[0];
    assert_eq!((num(s, "parts_dropped"), num(s, "kernel_drops"), num(s, "uncounted_drops")), (missing, missing, 0));
    if !is_root() {
        required::missing("network namespaces need root");
        return;
    }
    let o = lwcbench(
        &[
            "link",
            "-o",
            "lossy",
            "--video",
            "clip.y4m",
            "--frames",
            "20",
            "--transport",
            "udp",
            "--fps",
            "50",
            "--loss",
            "5",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = rows(&d.path().join("lossy/video_frames.csv"));
    assert_eq!(f.len(), 20);
    let mut dropped = 0;
    let (mut delivered, mut lost) = (0, 0);
    for (i, r) in f.iter().enumerate() {
        assert_eq!(num(r, "frame"), i as u64);
        let (p, got) = (num(r, "parts"), num(r, "parts_received"));
        assert_eq!(p, 81);
        dropped += p - got;
        if got == p {
            assert_eq!(r["status"], "delivered", "{r:?}");
            delivered += 1;
        } else {
            assert!(r["status"].starts_with("lost_"), "{r:?}");
            lost += 1;
        }
    }
    // 5 % of 81 parts: a frame survives with probability 0.95^81 ≈ 1.6 %, so most are lost.
    assert!(lost > 0, "no frame lost at 5 % part loss");
    let s = &rows(&d.path().join("lossy/link_video.csv"))[0];
    assert_eq!((num(s, "frames_sent"), num(s, "delivered"), num(s, "lost")), (20, delivered, lost));
    assert_eq!(num(s, "parts_dropped"), dropped);
    // On a busy machine the server's socket buffer may overflow too: those drops are the
    // kernel's, counted apart from the injected loss, and together they are every missing part.
    let (injected, kernel) = (num(s, "injected_drops"), num(s, "kernel_drops"));
    assert_eq!(injected + kernel + num(s, "send_errors"), dropped, "every dropped part counted: {s:?}");
    assert_eq!((num(s, "counted_drops"), num(s, "uncounted_drops")), (dropped, 0));
    assert!(injected > 0, "--loss 5 dropped nothing: {s:?}");
}
