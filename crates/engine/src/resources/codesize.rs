//! Code size of one implementation: bytes of machine code of its functions in the binary that
//! is running, read from that binary's symbol table (docs/metrics.md, "code_bytes").
//!
//! Method, in three steps:
//! 1. Every function symbol (ELF `STT_FUNC`, size > 0) of the binary that holds this code is
//!    read with the `object` crate and demangled (`rustc-demangle`; C++ names are kept as
//!    mangled text, which still contains the identifiers matched below).
//! 2. *Roots*: the functions whose name contains one of the implementation's markers (a type
//!    or module path such as `lwcbench_estream::trivium::` or the C symbol prefix
//!    `draco_fast_`), at identifier boundaries, minus verification and metadata code.
//! 3. *Closure*: the machine code of every counted function is scanned for direct calls and
//!    jumps (x86-64 `call/jmp rel32`, AArch64 `bl/b imm26`) whose target is the first byte of
//!    a function symbol. A callee is added — and scanned in turn — when its name belongs to
//!    cipher code (the crates listed in [`CIPHER_CODE`]) and is not another implementation's
//!    root. This is how monomorphised generic helpers (e.g. `lwcbench_estream::BitBuf::run`,
//!    whose legacy-mangled name does not say for which cipher it was instantiated) and C++
//!    internals in anonymous namespaces are attributed to the cipher that calls them.
//!
//! The standard library (memcpy, panics, formatting, allocation) is never counted: it is the
//! same for every cipher. A helper shared by two implementations (e.g. the Salsa20 core used by
//! the 128- and 256-bit adapters) is counted in both: the figure is what the implementation
//! would need on its own. Code that the compiler inlined into a counted function is counted
//! there; cipher code inlined into the measurement loop is not (the loop calls through a trait
//! object, so there is none). Addresses are de-duplicated (aliases are counted once).
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use lwcbench_catalog::Entry;
use object::{Architecture, Object, ObjectSection, ObjectSymbol, SymbolKind};

/// One function of the binary.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// Demangled name (without the Rust hash suffix), or the raw name if not demangled.
    pub name: String,
    /// Start address.
    pub addr: u64,
    /// Size in bytes (from the symbol table).
    pub size: u64,
    /// The function's machine code (empty if its section has no file data).
    pub code: Vec<u8>,
}

/// The function table of one binary plus its instruction set.
pub struct Binary {
    /// The binary read.
    pub path: PathBuf,
    /// Its instruction set.
    pub arch: Architecture,
    /// Its functions.
    pub funcs: Vec<Func>,
}

/// Crates and name fragments whose functions are cipher code (step 3 of the method).
pub const CIPHER_CODE: &[&str] = &[
    "lwcbench_estream",
    "lwcbench_draco",
    "lwcbench_cpp",
    "lwcbench_lightweight",
    "lwcbench_catalog::adapters",
    "lwcbench_core::",
    "salsa20",
    "chacha20",
    "rabbit",
    "cipher::",
    "draco_",
    "Draco",
];

/// Name fragments of verification, test and metadata code: never roots, never callees.
pub const NOT_CIPHER_CODE: &[&str] = &[
    "::verify",
    "verify_",
    "_check",
    "::kat::",
    "conformance::",
    "::tests::",
    ">::info",
    "::register",
    "::mk_",
    "::make_",
];

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Does `name` contain `marker` starting and ending at identifier boundaries? ("Salsa20" does
/// not match inside "Salsa20_128", "chacha20::" does not match inside "rand_chacha20::").
pub fn contains_marker(name: &str, marker: &str) -> bool {
    if marker.is_empty() {
        return false;
    }
    let first_ident = marker.chars().next().is_some_and(is_ident);
    // A marker ending in '_' or "::" is a prefix ("draco_fast_", "…::trivium::").
    let last_ident = marker.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
    name.match_indices(marker).any(|(i, _)| {
        // A digit before the marker is the length prefix of an Itanium-mangled C++ name
        // ("16draco_fast_state"), not part of a longer identifier.
        let before_ok = !first_ident || !name[..i].chars().last().is_some_and(|c| is_ident(c) && !c.is_ascii_digit());
        let after_ok = !last_ident || !name[i + marker.len()..].chars().next().is_some_and(is_ident);
        before_ok && after_ok
    })
}

fn demangle(raw: &str) -> String {
    match rustc_demangle::try_demangle(raw) {
        Ok(d) => format!("{d:#}"),
        Err(_) => raw.to_string(),
    }
}

impl Binary {
    /// Parse an ELF/Mach-O/PE file's function symbols.
    pub fn parse(path: PathBuf, data: &[u8]) -> Result<Binary, String> {
        let file = object::File::parse(data).map_err(|e| format!("{}: {e}", path.display()))?;
        let arch = file.architecture();
        let mut funcs = Vec::new();
        let mut seen = BTreeSet::new();
        for sym in file.symbols() {
            if sym.kind() != SymbolKind::Text || sym.size() == 0 {
                continue;
            }
            let Some(idx) = sym.section_index() else { continue };
            let Ok(sec) = file.section_by_index(idx) else { continue };
            let Ok(raw) = sym.name() else { continue };
            if !seen.insert((sym.address(), raw.to_string())) {
                continue;
            }
            let code = sec
                .data()
                .ok()
                .and_then(|d| {
                    let off = sym.address().checked_sub(sec.address())? as usize;
                    d.get(off..off + sym.size() as usize).map(<[u8]>::to_vec)
                })
                .unwrap_or_default();
            funcs.push(Func { name: demangle(raw), addr: sym.address(), size: sym.size(), code });
        }
        if funcs.is_empty() {
            return Err(format!("{}: no function symbols (stripped binary?)", path.display()));
        }
        Ok(Binary { path, arch, funcs })
    }

    /// The binary (or shared library, e.g. the Python extension) that contains this code:
    /// the file mapped at the address of this function in `/proc/self/maps`, else
    /// `/proc/self/exe`.
    pub fn current() -> Result<Binary, String> {
        let path = mapped_file_of(Binary::current as fn() -> Result<Binary, String> as usize)
            .unwrap_or_else(|| PathBuf::from("/proc/self/exe"));
        let data = std::fs::read(&path).map_err(|e| format!("code size: reading {}: {e}", path.display()))?;
        Binary::parse(path, &data)
    }

    /// Direct call/jump targets in `f`'s code that are function starts.
    fn callees(&self, f: &Func, starts: &BTreeMap<u64, Vec<usize>>) -> Vec<usize> {
        let mut out = Vec::new();
        let c = &f.code;
        match self.arch {
            Architecture::X86_64 | Architecture::I386 => {
                // call rel32 (E8) / jmp rel32 (E9): target = address of next instruction + rel.
                // Scanning every byte also sees E8/E9 inside other instructions; requiring the
                // target to be exactly a function start makes a false hit very unlikely.
                for i in 0..c.len().saturating_sub(4) {
                    if c[i] == 0xE8 || c[i] == 0xE9 {
                        let rel = i32::from_le_bytes([c[i + 1], c[i + 2], c[i + 3], c[i + 4]]) as i64;
                        let t = (f.addr as i64 + i as i64 + 5 + rel) as u64;
                        if let Some(v) = starts.get(&t) {
                            out.extend(v.iter().copied());
                        }
                    }
                }
            }
            Architecture::Aarch64 => {
                // bl (0x94000000) / b (0x14000000) with a signed 26-bit word offset.
                for (k, w) in c.chunks_exact(4).enumerate() {
                    let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                    if w & 0x7C00_0000 == 0x1400_0000 {
                        let imm = ((w & 0x03FF_FFFF) << 6) as i32 >> 6;
                        let t = (f.addr as i64 + 4 * k as i64 + 4 * imm as i64) as u64;
                        if let Some(v) = starts.get(&t) {
                            out.extend(v.iter().copied());
                        }
                    }
                }
            }
            _ => {}
        }
        out
    }
}

fn mapped_file_of(addr: usize) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    for line in maps.lines() {
        let mut it = line.split_whitespace();
        let range = it.next()?;
        let (lo, hi) = range.split_once('-')?;
        let (lo, hi) = (usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?);
        if (lo..hi).contains(&addr) {
            let path = it.nth(4)?;
            return path.starts_with('/').then(|| PathBuf::from(path));
        }
    }
    None
}

/// The result for one implementation.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeSize {
    /// Machine code bytes of the functions counted.
    pub bytes: u64,
    /// Functions counted (after de-duplicating aliases).
    pub functions: usize,
    /// Their names, largest first (for inspection and tests).
    pub names: Vec<(String, u64)>,
}

fn is_root(name: &str, markers: &[&str]) -> bool {
    markers.iter().any(|m| contains_marker(name, m)) && !NOT_CIPHER_CODE.iter().any(|x| name.contains(x))
}

fn is_cipher_code(name: &str) -> bool {
    CIPHER_CODE.iter().any(|c| name.contains(c)) && !NOT_CIPHER_CODE.iter().any(|x| name.contains(x))
}

/// Code size of the implementation whose roots match `markers`; `others` are the markers of
/// every other implementation (their roots are never pulled in through a call).
pub fn measure(bin: &Binary, markers: &[&str], others: &[&str]) -> CodeSize {
    let mut starts: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, f) in bin.funcs.iter().enumerate() {
        starts.entry(f.addr).or_default().push(i);
    }
    let mut counted: BTreeSet<usize> = BTreeSet::new();
    let mut todo: Vec<usize> = (0..bin.funcs.len()).filter(|&i| is_root(&bin.funcs[i].name, markers)).collect();
    while let Some(i) = todo.pop() {
        if !counted.insert(i) {
            continue;
        }
        for j in bin.callees(&bin.funcs[i], &starts) {
            let n = &bin.funcs[j].name;
            let foreign = others.iter().any(|m| contains_marker(n, m)) && !is_root(n, markers);
            if !counted.contains(&j) && is_cipher_code(n) && !foreign {
                todo.push(j);
            }
        }
    }
    // One size per address: aliases (two names, one body) count once.
    let mut by_addr: BTreeMap<u64, (u64, &str)> = BTreeMap::new();
    for &i in &counted {
        let f = &bin.funcs[i];
        by_addr.entry(f.addr).or_insert((f.size, &f.name));
    }
    let mut names: Vec<(String, u64)> = by_addr.values().map(|(s, n)| (n.to_string(), *s)).collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    CodeSize { bytes: by_addr.values().map(|v| v.0).sum(), functions: by_addr.len(), names }
}

/// Every code-size marker of every entry in `all` except `me`'s (entries carry their markers:
/// `Entry::code_markers` in the catalogue).
pub fn other_markers(me: &Entry, all: &[Entry]) -> Vec<&'static str> {
    let id = me.id();
    all.iter().filter(|e| e.id() != id).flat_map(|e| e.code_markers.iter().copied()).collect()
}

/// Code size of the catalogue entry `e`: its own markers are the roots, the markers of every
/// other entry of `all` are foreign.
pub fn measure_entry(bin: &Binary, e: &Entry, all: &[Entry]) -> CodeSize {
    measure(bin, e.code_markers, &other_markers(e, all))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> Entry {
        lwcbench_catalog::find(id).unwrap_or_else(|| panic!("{id} registered"))
    }

    #[test]
    fn other_markers_are_every_other_entrys() {
        let all = lwcbench_catalog::registry();
        let trivium = entry("Trivium/rust");
        assert_eq!(trivium.code_markers, ["lwcbench_estream::trivium::"]);
        let others = other_markers(&trivium, &all);
        assert!(!others.contains(&"lwcbench_estream::trivium::"));
        // the C++ DRACO's symbol prefix and a RustCrypto adapter's type path are foreign to Trivium
        assert!(others.contains(&"draco_fast_") && others.iter().any(|m| m.ends_with("::Salsa20_128")));
        let n: usize = all.iter().map(|e| e.code_markers.len()).sum();
        assert_eq!(others.len(), n - 1);
    }

    fn f(name: &str, addr: u64, code: Vec<u8>) -> Func {
        Func { name: name.into(), addr, size: code.len() as u64, code }
    }

    /// x86-64 `call rel32` from `at` (address of the E8 byte) to `to`.
    fn call(at: u64, to: u64) -> Vec<u8> {
        let rel = (to as i64 - (at as i64 + 5)) as i32;
        let mut v = vec![0xE8];
        v.extend_from_slice(&rel.to_le_bytes());
        v
    }

    #[test]
    fn markers_respect_identifier_boundaries() {
        assert!(contains_marker(
            "<lwcbench_catalog::adapters::estream::Salsa20 as X>::init",
            "lwcbench_catalog::adapters::estream::Salsa20"
        ));
        assert!(!contains_marker(
            "<lwcbench_catalog::adapters::estream::Salsa20_128 as X>::init",
            "lwcbench_catalog::adapters::estream::Salsa20"
        ));
        assert!(!contains_marker("rand_chacha20::guts", "chacha20::"));
        assert!(contains_marker("_ZN12_GLOBAL__N_14Fast5blockER16draco_fast_state", "draco_fast_"));
        assert!(contains_marker("draco_fast_init", "draco_fast_"));
    }

    #[test]
    fn closure_by_hand() {
        // root A (16 B) calls helper B (32 B), which calls C (runtime, not counted) and jumps to
        // D (another implementation's root, not counted); E (8 B) is an alias of A's address
        // under a second name and counts once; V (verification code) calls A but is no root.
        // Expected: A + B = 16 + 32 = 48 bytes, 2 functions.
        let mut a = call(0x1000, 0x2000);
        a.resize(16, 0x90);
        let mut b = call(0x2000, 0x3000);
        let mut jmp = call(0x2005, 0x4000);
        jmp[0] = 0xE9;
        b.extend(jmp);
        b.resize(32, 0x90);
        let bin = Binary {
            path: "hand-made".into(),
            arch: Architecture::X86_64,
            funcs: vec![
                f("<lwcbench_estream::trivium::Trivium as lwcbench_core::StreamCipher>::apply_bits", 0x1000, a.clone()),
                f("lwcbench_estream::BitBuf::run", 0x2000, b),
                f("core::panicking::panic", 0x3000, vec![0xC3; 64]),
                f(
                    "<lwcbench_estream::grain_v1::GrainV1 as lwcbench_core::StreamCipher>::init",
                    0x4000,
                    vec![0xC3; 128],
                ),
                f("lwcbench_estream::trivium::alias", 0x1000, a),
                f("lwcbench_catalog::adapters::estream::verify_trivium", 0x5000, call(0x5000, 0x1000)),
            ],
        };
        let all = lwcbench_catalog::registry();
        let cs = measure_entry(&bin, &entry("Trivium/rust"), &all);
        assert_eq!((cs.bytes, cs.functions), (48, 2), "{:?}", cs.names);
        let g = measure_entry(&bin, &entry("Grain-v1/rust"), &all);
        assert_eq!(g.bytes, 128);
    }

    #[test]
    fn aarch64_branch_decoding() {
        // bl +8 words from 0x100 → 0x120; b −1 word from 0x104 → 0x100 (itself a root).
        let bl = 0x9400_0008u32.to_le_bytes();
        let b_back = (0x1400_0000u32 | 0x03FF_FFFF).to_le_bytes();
        let code: Vec<u8> = bl.iter().chain(b_back.iter()).copied().collect();
        let bin = Binary {
            path: "hand-made".into(),
            arch: Architecture::Aarch64,
            funcs: vec![
                f("lwcbench_estream::hc128::Hc128::init", 0x100, code),
                f("lwcbench_estream::Words::next", 0x120, vec![0; 40]),
            ],
        };
        let cs = measure(&bin, entry("HC-128/rust").code_markers, &[]);
        assert_eq!(cs.bytes, 8 + 40);
    }

    #[test]
    fn this_binary_has_plausible_sizes() {
        let bin = Binary::current().expect("the test binary has symbols");
        let all = lwcbench_catalog::registry();
        for id in ["Trivium/rust", "ChaCha20/rustcrypto", "DRACO/cpp-fast", "MICKEY-2.0/rust"] {
            let cs = measure_entry(&bin, &entry(id), &all);
            // More than the thin trait adapters alone (each < 100 B), less than 1 MB.
            assert!(cs.bytes > 300 && cs.bytes < 1_000_000, "{id}: {} bytes in {:?}", cs.bytes, cs.names);
        }
        // The C++ DRACO count includes its exported init function.
        let cpp = measure_entry(&bin, &entry("DRACO/cpp-fast"), &all);
        assert!(cpp.names.iter().any(|(n, _)| n.contains("draco_fast_init")), "{:?}", cpp.names);
    }
}

/// Prints what is counted for every known implementation:
/// `cargo test --release -p lwcbench-engine -- --ignored --nocapture code_size_listing`.
#[cfg(test)]
#[test]
#[ignore]
fn code_size_listing() {
    let bin = Binary::current().unwrap();
    let all = lwcbench_catalog::registry();
    for e in all.iter().filter(|e| e.info.family == lwcbench_core::Family::Stream) {
        let id = e.id();
        let cs = measure_entry(&bin, e, &all);
        println!("{id}: {} bytes in {} functions", cs.bytes, cs.functions);
        for (n, s) in &cs.names {
            println!("    {s:>7}  {n}");
        }
    }
}
