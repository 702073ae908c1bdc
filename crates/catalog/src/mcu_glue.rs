//! The microcontroller glue, generated from the catalogue entries' [`McuImage`] and `info`:
//! `mcu/images.json` (the image list `mcu/build.py` reads), one `mcu/images/src/bin/<image>.rs`
//! per image, and the host oracle's dispatch `mcu/hostref/src/images.rs`.
//!
//! `mcu/images` and `mcu/hostref` are workspaces of their own that build for `no_std` targets
//! offline and cannot depend on this crate (it links system libraries), so the generated files
//! are kept in the repository: the test `mcu_glue_follows_the_catalogue` fails while one
//! differs from what the entries say, and `LWCBENCH_BLESS=1` rewrites them (and removes the
//! source of an image no entry has any more).
use lwcbench_core::Family;

use crate::entry::{Entry, McuState};

/// Where the image sources live, relative to the repository root.
pub const IMAGE_DIR: &str = "mcu/images/src/bin";
/// The one hand-written image: the harness with no cipher (`mcu/images/src/bin/baseline.rs`).
pub const BASELINE: &str = "baseline";
/// The generated dispatch of the host oracle, relative to the repository root.
pub const HOSTREF: &str = "mcu/hostref/src/images.rs";
/// The image list read by `mcu/build.py`, relative to the repository root.
pub const MANIFEST: &str = "mcu/images.json";

/// How to regenerate the files; named in every generated file and in the test's failure.
pub const BLESS: &str = "LWCBENCH_BLESS=1 cargo test --profile citest -p lwcbench-catalog mcu_glue";

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GluedFile {
    /// Path relative to the repository root.
    pub path: String,
    /// The whole text of the file.
    pub text: String,
}

/// `mcu/images.json` of the registry: the microcontroller images of the catalogue, one JSON
/// object per line, read by `mcu/build.py` (the MCU scripts run without a Rust build).
pub fn mcu_manifest() -> String {
    manifest(&crate::registry())
}

/// The images of `entries` in listing order, one JSON object per line.
fn manifest(entries: &[Entry]) -> String {
    let q = |s: &str| serde_json::Value::from(s).to_string();
    let rows: Vec<String> = entries
        .iter()
        .filter_map(|e| {
            let image = e.mcu_image?;
            Some(format!(
                "  {{\"image\": {}, \"cipher\": {}, \"implementation\": {}, \"kind\": {}}}",
                q(image.name),
                q(e.info.name),
                q(e.info.implementation),
                q(kind(e.info.family))
            ))
        })
        .collect();
    format!("[\n{}\n]\n", rows.join(",\n"))
}

fn kind(f: Family) -> &'static str {
    match f {
        Family::Stream => "stream",
        Family::Block => "block",
        Family::Aead => "aead",
        Family::Mode => "mode",
    }
}

/// One image's facts, checked: what both generated sources need.
struct Image<'a> {
    e: &'a Entry,
    name: &'static str,
    ty: &'static str,
    /// The harness macro invocation of `mcu/images/src/lib.rs` for this image.
    invocation: String,
}

impl Image<'_> {
    fn block(&self) -> u16 {
        self.e.info.block_bits / 8
    }
    fn tag(&self) -> u16 {
        self.e.info.tag_bits / 8
    }
    /// The image source. One doc line, so that the invocation stays on line 5 as in the
    /// hand-written files this replaces.
    fn source(&self) -> String {
        format!(
            "//! {} ({}), generated from its catalogue entry by crates/catalog/src/mcu_glue.rs: do not edit.\n\
             #![no_std]\n#![no_main]\nuse lwc_mcu_images as _;\n{}",
            self.e.id(),
            self.ty,
            rustfmt_call(&format!("lwc_mcu_images::{}", self.invocation))
        )
    }
    /// The type as the host oracle names it: `mcu/hostref` compiles `mcu/images/src/rc.rs` as
    /// its module `rc`, and a path with generic arguments needs the qualified form to be
    /// called.
    fn host_new(&self) -> String {
        let ty = self.ty.replace("lwc_mcu_images::rc::", "rc::");
        if ty.contains('<') {
            format!("<{ty}>::default()")
        } else {
            format!("{ty}::default()")
        }
    }

    fn check(e: &Entry) -> Result<Option<Image<'_>>, String> {
        let Some(m) = e.mcu_image else { return Ok(None) };
        let id = e.id();
        let name_ok = m.name.starts_with(|c: char| c.is_ascii_lowercase())
            && m.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !name_ok || m.name == BASELINE {
            return Err(format!("{id}: MCU image name {:?} is not [a-z][a-z0-9_]* or is {BASELINE:?}", m.name));
        }
        // A Rust type path and nothing else: the text is pasted into two crates' sources.
        let ty_ok = !m.ty.is_empty()
            && m.ty.chars().all(|c| c.is_ascii_alphanumeric() || "_:<>, ".contains(c))
            && m.ty.matches('<').count() == m.ty.matches('>').count();
        if !ty_ok {
            return Err(format!("{id}: MCU image type {:?} is not a Rust type path", m.ty));
        }
        let info = &e.info;
        if m.state == McuState::Zeroed && info.family != Family::Stream {
            return Err(format!("{id}: a zero-filled MCU state is for stream ciphers only (use .mcu)"));
        }
        let whole = |bits: u16| bits.is_multiple_of(8);
        let (ty, key, iv) = (m.ty, info.key_bits / 8, info.iv_bits / 8);
        let invocation = match (info.family, m.state) {
            _ if info.key_bits == 0 || !whole(info.key_bits) || !whole(info.iv_bits) => None,
            (Family::Stream, McuState::Zeroed) => Some(format!("stream_image!({ty}, {key}, {iv})")),
            (Family::Stream, McuState::Built) => Some(format!("stream_image_default!({ty}, {key}, {iv})")),
            (Family::Block, _) if info.block_bits > 0 && whole(info.block_bits) => {
                Some(format!("block_image!({ty}, {key}, {})", info.block_bits / 8))
            }
            (Family::Aead, _) if info.tag_bits > 0 && whole(info.tag_bits) => {
                Some(format!("aead_image!({ty}, {key}, {iv}, {})", info.tag_bits / 8))
            }
            _ => None,
        };
        let Some(invocation) = invocation else {
            return Err(format!(
                "{id}: no MCU image for family {} with key {} bits, IV {} bits, block {} bits, tag {} bits",
                kind(info.family),
                info.key_bits,
                info.iv_bits,
                info.block_bits,
                info.tag_bits
            ));
        };
        Ok(Some(Image { e, name: m.name, ty, invocation }))
    }
}

/// `call;` as rustfmt lays it out (max_width 120, rustfmt.toml): on one line when it fits,
/// else one argument per line, split at the commas outside `<>` and `()`.
fn rustfmt_call(call: &str) -> String {
    let one = format!("{call};\n");
    if one.len() - 1 <= 120 {
        return one;
    }
    let Some((head, args)) = call.split_once('(') else { return one };
    let args = args.strip_suffix(')').unwrap_or(args);
    let (mut parts, mut depth, mut cur) = (Vec::new(), 0i32, String::new());
    for ch in args.chars() {
        match ch {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    parts.push(cur.trim().to_string());
    let body: String = parts.iter().map(|p| format!("    {p},\n")).collect();
    // rustfmt drops the comma after a macro's last argument.
    let body = body.strip_suffix(",\n").map(|b| format!("{b}\n")).unwrap_or(body);
    format!("{head}(\n{body});\n")
}

/// The host oracle's dispatch: one function per family, each a match on the image name.
fn hostref(images: &[Image]) -> String {
    let arms = |family: Family, size: &dyn Fn(&Image) -> Option<u16>| -> String {
        images
            .iter()
            .filter(|im| im.e.info.family == family)
            .map(|im| match size(im) {
                Some(n) => format!("        {:?} => (Box::new({}), {n}),\n", im.name, im.host_new()),
                None => format!("        {:?} => Box::new({}),\n", im.name, im.host_new()),
            })
            .collect()
    };
    let rc = if images.iter().any(|im| im.ty.contains("lwc_mcu_images::rc::")) { "\nuse crate::rc;\n" } else { "" };
    format!(
        "//! Generated from the catalogue entries' microcontroller images by crates/catalog/src/mcu_glue.rs\n\
         //! (`{BLESS}`): edit the entries, not this file.\n\
         //! Each image's host implementation, with the block or tag size its harness uses.\n\
         use lwcbench_core::{{Aead, BlockCipher, StreamCipher}};\n{rc}\n\
         /// A stream-cipher image's implementation.\n\
         pub fn stream(image: &str) -> Option<Box<dyn StreamCipher>> {{\n    Some(match image {{\n{}        _ => return None,\n    }})\n}}\n\n\
         /// A block-cipher image's implementation and its block size in bytes.\n\
         pub fn block(image: &str) -> Option<(Box<dyn BlockCipher>, usize)> {{\n    Some(match image {{\n{}        _ => return None,\n    }})\n}}\n\n\
         /// An AEAD image's implementation and its tag size in bytes.\n\
         pub fn aead(image: &str) -> Option<(Box<dyn Aead>, usize)> {{\n    Some(match image {{\n{}        _ => return None,\n    }})\n}}\n",
        arms(Family::Stream, &|_| None),
        arms(Family::Block, &|im| Some(im.block())),
        arms(Family::Aead, &|im| Some(im.tag())),
    )
}

/// Every generated file for `entries`: the manifest, the image sources in listing order, the
/// host dispatch. An error names the entry whose image facts cannot make an image.
pub fn glue(entries: &[Entry]) -> Result<Vec<GluedFile>, String> {
    let mut images: Vec<Image> = Vec::new();
    for e in entries {
        if let Some(im) = Image::check(e)? {
            if let Some(other) = images.iter().find(|o| o.name == im.name) {
                return Err(format!("MCU image {:?} is claimed by {} and {}", im.name, other.e.id(), e.id()));
            }
            images.push(im);
        }
    }
    let mut files = vec![GluedFile { path: MANIFEST.to_string(), text: manifest(entries) }];
    files.extend(images.iter().map(|im| GluedFile { path: format!("{IMAGE_DIR}/{}.rs", im.name), text: im.source() }));
    files.push(GluedFile { path: HOSTREF.to_string(), text: hostref(&images) });
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::McuImage;
    use std::path::Path;

    fn root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// The files under `mcu/` equal what the catalogue generates, and every image source
    /// belongs to an entry. `LWCBENCH_BLESS=1` rewrites them and removes stale image sources.
    #[test]
    fn mcu_glue_follows_the_catalogue() {
        let root = root();
        let files = glue(&crate::registry()).unwrap();
        assert!(files.len() >= 27 + 2, "{} files", files.len());
        let bless = std::env::var_os("LWCBENCH_BLESS").is_some();
        let wanted: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
        let mut stale = Vec::new();
        for f in std::fs::read_dir(root.join(IMAGE_DIR)).unwrap() {
            let name = f.unwrap().file_name().to_string_lossy().to_string();
            let path = format!("{IMAGE_DIR}/{name}");
            // only Rust sources are images (cargo builds each src/bin/*.rs)
            if name.ends_with(".rs") && name != format!("{BASELINE}.rs") && !wanted.contains(&path) {
                if bless {
                    std::fs::remove_file(root.join(&path)).unwrap();
                } else {
                    stale.push(path);
                }
            }
        }
        let mut differ = Vec::new();
        for f in &files {
            let p = root.join(&f.path);
            if bless {
                std::fs::write(&p, &f.text).unwrap();
            }
            if std::fs::read_to_string(&p).ok().as_deref() != Some(f.text.as_str()) {
                differ.push(f.path.clone());
            }
        }
        assert!(
            differ.is_empty() && stale.is_empty(),
            "generated MCU glue differs from the catalogue: {differ:?}; image sources without an entry: {stale:?}; \
             run `{BLESS}`"
        );
    }

    fn xoodyak() -> Entry {
        crate::find("Xoodyak/rust-ref").unwrap()
    }

    /// An AEAD entry's image and host arm carry the sizes of its `info`: Xoodyak has a 128-bit
    /// key, a 128-bit nonce and a 128-bit tag (Xoodyak specification, §3, Cyclist keyed mode).
    #[test]
    fn an_aead_entry_gives_its_image_and_host_arm() {
        let e = xoodyak().mcu("dry_aead", "lwcbench_lightweight::xoodyak::Xoodyak");
        let files = glue(std::slice::from_ref(&e)).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [MANIFEST, "mcu/images/src/bin/dry_aead.rs", HOSTREF]);
        assert!(files[0]
            .text
            .contains(r#"{"image": "dry_aead", "cipher": "Xoodyak", "implementation": "rust-ref", "kind": "aead"}"#));
        let src = files[1].text.lines().nth(4).unwrap();
        assert_eq!(src, "lwc_mcu_images::aead_image!(lwcbench_lightweight::xoodyak::Xoodyak, 16, 16, 16);");
        assert!(files[2]
            .text
            .contains("        \"dry_aead\" => (Box::new(lwcbench_lightweight::xoodyak::Xoodyak::default()), 16),\n"));
    }

    /// The other families: a stream cipher of either state and a block cipher behind an
    /// adapter of `mcu/images/src/rc.rs` (XTEA: 128-bit key, 64-bit block).
    #[test]
    fn a_long_invocation_is_laid_out_as_rustfmt_does() {
        // Expected: rustfmt 1.95's output for this line (the CI fmt check printed it; the
        // generated files failed `cargo fmt --check` before).
        let call = "lwc_mcu_images::aead_image!(lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U12>>, 16, 12, 16)";
        assert_eq!(
            super::rustfmt_call(call),
            "lwc_mcu_images::aead_image!(\n    lwc_mcu_images::rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U12>>,\n    16,\n    12,\n    16\n);\n"
        );
        let short = "lwc_mcu_images::aead_image!(lwcbench_lightweight::xoodyak::Xoodyak, 16, 16, 16)";
        assert_eq!(super::rustfmt_call(short), format!("{short};\n"));
    }

    #[test]
    fn stream_and_block_entries_give_their_macros() {
        let trivium = crate::find("Trivium/rust").unwrap();
        let xtea = crate::find("XTEA/rustcrypto").unwrap();
        let files = glue(&[
            trivium.clone(),
            trivium.clone().mcu("t_built", "lwcbench_estream::Trivium"),
            xtea.clone().mcu("x", "lwc_mcu_images::rc::RcBlock<xtea::Xtea>"),
        ])
        .unwrap();
        let line5 = |i: usize| files[i].text.lines().nth(4).unwrap().to_string();
        // Trivium: 80-bit key and IV (eSTREAM portfolio specification)
        assert_eq!(line5(1), "lwc_mcu_images::stream_image!(lwcbench_estream::Trivium, 10, 10);");
        assert_eq!(line5(2), "lwc_mcu_images::stream_image_default!(lwcbench_estream::Trivium, 10, 10);");
        assert_eq!(line5(3), "lwc_mcu_images::block_image!(lwc_mcu_images::rc::RcBlock<xtea::Xtea>, 16, 8);");
        let host = &files[4].text;
        assert!(host.contains("        \"trivium\" => Box::new(lwcbench_estream::Trivium::default()),\n"));
        assert!(host.contains("        \"x\" => (Box::new(<rc::RcBlock<xtea::Xtea>>::default()), 8),\n"));
        assert!(host.contains("\nuse crate::rc;\n"));
    }

    /// Facts that cannot make an image are refused with the entry's id, not written.
    #[test]
    fn impossible_images_are_refused() {
        let x = xoodyak();
        let err = |es: &[Entry]| glue(es).unwrap_err();
        assert!(err(&[x.clone().mcu_zeroed("z", "T")]).contains("stream ciphers only"));
        assert!(err(&[x.clone().mcu("Bad-Name", "T")]).contains("Xoodyak/rust-ref: MCU image name"));
        assert!(err(&[x.clone().mcu(BASELINE, "T")]).contains("is \"baseline\""));
        assert!(err(&[x.clone().mcu("a", "T; fn main() {}")]).contains("not a Rust type path"));
        assert!(err(&[x.clone().mcu("a", "Vec<u8")]).contains("not a Rust type path"));
        assert!(err(&[x.clone().mcu("a", "T"), x.clone().mcu("a", "U")]).contains("claimed by"));
        let mut tagless = x.clone().mcu("a", "T");
        tagless.info.tag_bits = 0;
        assert!(err(&[tagless]).contains("no MCU image for family aead"));
        let aes_mode = crate::registry().into_iter().find(|e| e.info.family == Family::Mode).unwrap();
        assert!(err(&[aes_mode.with_mcu(McuImage::new("m", "T"))]).contains("family mode"));
    }
}
