//! A device's capture file: every frame it sent, in hex, one per line, appended before the
//! frame is first published (the record a restart re-sends from and the chaos proof reads).
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::wire::frame::Header;

/// The complete frames of a capture file, in order (none if it does not exist). A last line
/// without its newline was cut by a kill while being written: that frame was never published
/// (capture comes first) and is skipped. Any other line that is not a frame in hex is an error
/// naming the line: the capture is the record of what was sent, and a damaged one cannot say
/// what a restart must re-send.
pub fn read_capture(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("--capture: {}: {e}", path.display())),
    };
    let mut frames = Vec::new();
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let Some(line) = line.strip_suffix(b"\n") else { break };
        match hex::decode(line).ok().filter(|f| Header::parse(f).is_ok()) {
            Some(f) => frames.push(f),
            None => {
                return Err(format!(
                    "--capture: {}: line {}: not a frame in hex; the capture is damaged and cannot tell what was \
                     sent (repair or remove that line)",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(frames)
}

/// Open a capture file for appending (created if missing). A last line cut by a kill is cut
/// off first, so the next frame starts a line of its own instead of completing a broken one.
pub fn open_capture(path: &Path) -> Result<std::fs::File, String> {
    let err = |e: std::io::Error| format!("--capture: {}: {e}", path.display());
    let mut f = std::fs::OpenOptions::new().create(true).read(true).append(true).open(path).map_err(err)?;
    let len = f.metadata().map_err(err)?.len();
    let mut end = len;
    let mut buf = vec![0u8; 64 << 10];
    let keep = loop {
        if end == 0 {
            break 0;
        }
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        f.seek(SeekFrom::Start(start)).and_then(|_| f.read_exact(chunk)).map_err(err)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            break start + i as u64 + 1;
        }
        end = start;
    };
    if keep < len {
        f.set_len(keep).map_err(err)?;
    }
    Ok(f)
}

/// Counter of the last complete frame of a capture file (reads only its tail).
pub fn last_counter(path: &Path) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(8192))).ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    buf.split_inclusive(|&b| b == b'\n')
        .filter_map(|l| l.strip_suffix(b"\n"))
        .filter_map(|l| hex::decode(l).ok())
        .filter_map(|fr| Header::parse(&fr).ok())
        .map(|h| h.counter)
        .next_back()
}

#[cfg(test)]
mod tests {
    use crate::wire::frame::Proto;
    use std::io::Write;

    use super::*;
    use crate::wire::keys::MasterKey;
    use crate::wire::suite::Keyed;

    fn frame(counter: u64) -> Vec<u8> {
        let s = crate::wire::suite::find("Ascon-AEAD128").unwrap();
        let k = MasterKey::from_bytes([5; 32]).cipher_key(Proto::Sensor, 2, s.id, s.key_len());
        let mut f = Vec::new();
        Keyed::new(&s, &k, Proto::Sensor, false).unwrap().seal(2, counter, b"reading", &mut f).unwrap();
        f
    }

    /// A kill cut the last line mid-write, leaving a non-UTF-8 byte: the complete frames before it
    /// are still what the restart re-sends (reading the file as one UTF-8 string lost all of
    /// them), and the cut line goes before the next frame is appended.
    #[test]
    fn a_cut_last_line_with_a_non_utf8_byte_keeps_the_frames_before_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cap");
        let (f0, f1, f2) = (frame(0), frame(1), frame(2));
        let mut bytes = format!("{}\n{}\n", hex::encode(&f0), hex::encode(&f1)).into_bytes();
        bytes.extend_from_slice(b"0a1b\xff");
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(read_capture(&p).unwrap(), vec![f0.clone(), f1.clone()]);
        let mut f = open_capture(&p).unwrap();
        f.write_all(format!("{}\n", hex::encode(&f2)).as_bytes()).unwrap();
        drop(f);
        assert_eq!(read_capture(&p).unwrap(), vec![f0, f1, f2]);
        assert_eq!(last_counter(&p), Some(2));
    }

    #[test]
    fn a_damaged_complete_line_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cap");
        let mut bytes = format!("{}\n", hex::encode(frame(0))).into_bytes();
        bytes.extend_from_slice(b"\xff\n");
        bytes.extend_from_slice(format!("{}\n", hex::encode(frame(1))).as_bytes());
        std::fs::write(&p, &bytes).unwrap();
        let e = read_capture(&p).unwrap_err();
        assert!(e.contains(&format!("{}: line 2: not a frame in hex", p.display())), "{e}");
        assert!(read_capture(&d.path().join("none")).unwrap().is_empty(), "no capture yet: nothing sent");
    }
}
