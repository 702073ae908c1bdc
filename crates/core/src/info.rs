/// Which of the three APIs an implementation offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// A stream cipher: [`crate::StreamCipher`].
    Stream,
    /// A block cipher: [`crate::BlockCipher`].
    Block,
    /// Authenticated encryption with associated data: [`crate::Aead`].
    Aead,
    /// A block-cipher mode without authentication (ECB, CBC, CFB, OFB, CTR): [`crate::CipherMode`].
    Mode,
}

impl Family {
    /// The lower-case name used in tables and file names ("stream", "block", "aead", "mode").
    pub const fn as_str(self) -> &'static str {
        match self {
            Family::Stream => "stream",
            Family::Block => "block",
            Family::Aead => "aead",
            Family::Mode => "mode",
        }
    }
}

/// Source language of the code that does the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// Rust.
    Rust,
    /// C.
    C,
    /// C++.
    Cpp,
    /// Python.
    Python,
}

impl Language {
    /// The language's usual spelling ("Rust", "C", "C++", "Python").
    pub const fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::C => "C",
            Language::Cpp => "C++",
            Language::Python => "Python",
        }
    }
}

/// Where the implementation comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Written in this repository.
    Own,
    /// A crate from crates.io.
    Crate {
        /// The crate's name on crates.io.
        name: &'static str,
        /// The crate version built in.
        version: &'static str,
    },
    /// A system library (OpenSSL, libgcrypt, wolfSSL, …) with its run-time version.
    System {
        /// The library's name, e.g. "OpenSSL".
        library: &'static str,
        /// The version the library reports at run time.
        version: &'static str,
    },
}

impl core::fmt::Display for Origin {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Origin::Own => f.write_str("own code"),
            Origin::Crate { name, version } => write!(f, "crate {name} {version}"),
            Origin::System { library, version } => write!(f, "system {library} {version}"),
        }
    }
}

/// How keystream bits are packed into bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOrder {
    /// First keystream bit is the most significant bit of the first byte.
    MsbFirst,
    /// First keystream bit is the least significant bit of the first byte (eSTREAM convention
    /// of e.g. Trivium and Grain).
    LsbFirst,
}

/// Metadata every implementation carries. Sizes are in bits except `state_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CipherInfo {
    /// Algorithm name as users know it, e.g. "ChaCha20", "AES-128-GCM".
    pub name: &'static str,
    /// Implementation name, unique per algorithm, e.g. "rust-ref", "cpp-fast", "rustcrypto".
    pub implementation: &'static str,
    /// Which of the APIs the implementation offers.
    pub family: Family,
    /// Key size.
    pub key_bits: u16,
    /// IV (stream) or nonce (AEAD) size; 0 where there is none.
    pub iv_bits: u16,
    /// Block size; 0 for stream ciphers.
    pub block_bits: u16,
    /// Tag size; 0 unless AEAD.
    pub tag_bits: u16,
    /// Bytes of cipher state the algorithm needs (not counting key-schedule caches the
    /// implementation chose to keep; see `impl_state_bytes`).
    pub state_bytes: u32,
    /// Where the implementation comes from.
    pub origin: Origin,
    /// The language of the code that does the work.
    pub language: Language,
    /// How keystream bits are packed into bytes (stream ciphers).
    pub bit_order: BitOrder,
    /// True if keystream can stop at any bit; false if it advances by whole bytes/words.
    pub bit_granular: bool,
    /// Shown wherever the cipher is listed (e.g. DRACO's provisional status). Empty if none.
    pub note: &'static str,
}

impl CipherInfo {
    /// Key size in bytes (`key_bits / 8`).
    pub const fn key_bytes(&self) -> usize {
        self.key_bits as usize / 8
    }
    /// IV or nonce size in bytes (`iv_bits / 8`).
    pub const fn iv_bytes(&self) -> usize {
        self.iv_bits as usize / 8
    }
    /// Block size in bytes (`block_bits / 8`).
    pub const fn block_bytes(&self) -> usize {
        self.block_bits as usize / 8
    }
    /// Tag size in bytes (`tag_bits / 8`).
    pub const fn tag_bytes(&self) -> usize {
        self.tag_bits as usize / 8
    }
}
