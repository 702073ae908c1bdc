//! On-chip crypto engines (data/crypto-engines.csv): what each engine of a chip computes, its
//! time per message, current, code size and the call that uses it, every figure with its
//! source and status. A board has the engines of its chip (data/boards.toml's `chip`).
use std::sync::OnceLock;

use crate::board::records;

/// The built-in data/crypto-engines.csv.
pub const ENGINES_CSV: &str = include_str!("../../../data/crypto-engines.csv");

/// What the CPU does while the engine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpu {
    /// The call waits with the CPU running: the board's active current.
    Active,
    /// The CPU sleeps until the engine's event: the board's sleep current.
    Sleep,
}

impl Cpu {
    /// The name as the table spells it.
    pub fn name(self) -> &'static str {
        match self {
            Cpu::Active => "active",
            Cpu::Sleep => "sleep",
        }
    }
}

/// A row of data/crypto-engines.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Engine {
    /// Chip name (as data/boards.toml's `chip`).
    pub chip: String,
    /// The engine as its datasheet names it.
    pub engine: String,
    /// What it computes, as data/cipher-status.csv names it.
    pub algorithm: String,
    /// Nonce lengths it takes, bytes (lo, hi); (0, 0) for none.
    pub nonce_bytes: (u32, u32),
    /// Tag lengths it makes, bytes (lo, hi); (0, 0) for none.
    pub tag_bytes: (u32, u32),
    /// It can seal the link's AES-128-CCM frame (12-byte nonce, 16-byte tag, the header as
    /// associated data).
    pub link_frame: bool,
    /// CPU cycles per message for the call, key and mode set-up.
    pub setup_cycles: f64,
    /// Cycles per AES block at the board's clock.
    pub block_cycles: f64,
    /// Current the engine adds while it runs, mA.
    pub engine_ma: f64,
    /// What the CPU does meanwhile.
    pub cpu: Cpu,
    /// Code of the driver or library the call needs.
    pub flash_bytes: u64,
    /// Its static RAM + stack.
    pub ram_bytes: u64,
    /// The band the ranking puts on its time and energy, ± %.
    pub error_pct: f64,
    /// The call or registers that use it.
    pub call: String,
    /// `datasheet` or `estimate`.
    pub status: String,
    /// Where every figure comes from.
    pub source: String,
}

/// Algorithms a row may name: the AEADs are `choose` candidates, the block cipher a fact.
pub const ALGORITHMS: &[&str] = &["AES-128-CCM", "AES-128-GCM", "AES-128"];

/// Columns of data/crypto-engines.csv, in the order [`parse`] reads them.
const COLUMNS: [&str; 16] = [
    "chip",
    "engine",
    "algorithm",
    "nonce_bytes",
    "tag_bytes",
    "link_frame",
    "setup_cycles",
    "block_cycles",
    "engine_ma",
    "cpu",
    "flash_bytes",
    "ram_bytes",
    "error_pct",
    "call",
    "status",
    "source",
];

/// `N` or `LO-HI` within 0..=max, LO ≤ HI.
fn range(v: &str, max: u32) -> Option<(u32, u32)> {
    let (lo, hi) = v.split_once('-').unwrap_or((v, v));
    let (lo, hi) = (lo.trim().parse::<u32>().ok()?, hi.trim().parse::<u32>().ok()?);
    (lo <= hi && hi <= max).then_some((lo, hi))
}

/// Parse an engines table (columns as data/crypto-engines.csv); an error names the line and
/// column.
pub fn parse(text: &str, origin: &str) -> Result<Vec<Engine>, String> {
    let mut out: Vec<Engine> = Vec::new();
    for (line, f) in records(text, origin, &COLUMNS)? {
        let at = |i: usize, what: &str| format!("{origin}: line {line}: {} '{}' {what}", COLUMNS[i], f[i]);
        let num = |i: usize, lo: f64, max: f64| {
            f[i].parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= lo && *v <= max)
                .ok_or_else(|| at(i, &format!("is not a number in {lo}..={max}")))
        };
        let count = |i: usize, max: u64| {
            f[i].parse::<u64>().ok().filter(|v| *v <= max).ok_or_else(|| at(i, &format!("is not a count up to {max}")))
        };
        for i in [0, 1, 13, 15] {
            if f[i].is_empty() {
                return Err(format!("{origin}: line {line}: no {}", COLUMNS[i]));
            }
        }
        if !ALGORITHMS.contains(&f[2].as_str()) {
            return Err(at(2, &format!("is not one of {}", ALGORITHMS.join(", "))));
        }
        let nonce_bytes = range(&f[3], 64).ok_or_else(|| at(3, "is not N or LO-HI bytes up to 64"))?;
        let tag_bytes = range(&f[4], 16)
            .filter(|(lo, hi)| lo % 2 == 0 && hi % 2 == 0)
            .ok_or_else(|| at(4, "is not N or LO-HI even bytes up to 16"))?;
        let aead = f[2] != "AES-128";
        if aead != (tag_bytes.1 > 0 && nonce_bytes.1 > 0) {
            return Err(at(
                4,
                &format!("does not fit {}: an AEAD has a nonce and a tag, a block cipher neither", f[2]),
            ));
        }
        let link_frame = match f[5].as_str() {
            "yes" => true,
            "no" => false,
            _ => return Err(at(5, "is not yes or no")),
        };
        // The link's AES-128-CCM frame: a 12-byte nonce and a 16-byte tag.
        let within = |(lo, hi): (u32, u32), n: u32| lo <= n && n <= hi;
        if link_frame && !(f[2] == "AES-128-CCM" && within(nonce_bytes, 12) && within(tag_bytes, 16)) {
            return Err(at(5, "claims the link's AES-128-CCM frame without a 12-byte nonce and a 16-byte tag"));
        }
        let cpu = match f[9].as_str() {
            "active" => Cpu::Active,
            "sleep" => Cpu::Sleep,
            _ => return Err(at(9, "is not active or sleep")),
        };
        if !matches!(f[14].as_str(), "datasheet" | "estimate") {
            return Err(at(14, "is not datasheet or estimate"));
        }
        if out
            .iter()
            .any(|e| e.chip.eq_ignore_ascii_case(&f[0]) && e.engine.eq_ignore_ascii_case(&f[1]) && e.algorithm == f[2])
        {
            return Err(format!("{origin}: line {line}: {} {} {} appears twice", f[0], f[1], f[2]));
        }
        out.push(Engine {
            chip: f[0].clone(),
            engine: f[1].clone(),
            algorithm: f[2].clone(),
            nonce_bytes,
            tag_bytes,
            link_frame,
            // 1e8 cycles (over a second at any clock here) and 1 A bound what a call can be given.
            setup_cycles: num(6, 0.0, 1e8)?,
            block_cycles: num(7, 1.0, 1e8)?,
            engine_ma: num(8, 0.0, 1000.0)?,
            cpu,
            flash_bytes: count(10, 1 << 30)?,
            ram_bytes: count(11, 1 << 30)?,
            error_pct: num(12, 0.0, 99.0)?,
            call: f[13].clone(),
            status: f[14].clone(),
            source: f[15].clone(),
        });
    }
    Ok(out)
}

/// The built-in rows, parsed once; panics only if the shipped table does not parse (a test
/// parses it).
pub fn builtin() -> &'static [Engine] {
    static T: OnceLock<Vec<Engine>> = OnceLock::new();
    T.get_or_init(|| parse(ENGINES_CSV, "data/crypto-engines.csv").expect("built-in crypto engines parse"))
}

/// The engines of the chip of board `board_id` (data/boards.toml), in table order.
pub fn of_board(board_id: &str) -> Vec<&'static Engine> {
    static CHIPS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    let chips = CHIPS.get_or_init(|| crate::boards::builtin().boards.into_iter().map(|b| (b.id, b.chip)).collect());
    let Some((_, chip)) = chips.iter().find(|(id, _)| id.eq_ignore_ascii_case(board_id)) else { return Vec::new() };
    builtin().iter().filter(|e| e.chip.eq_ignore_ascii_case(chip)).collect()
}

impl Engine {
    /// An AEAD: a `choose` candidate (a block cipher alone is a fact).
    pub fn is_aead(&self) -> bool {
        self.algorithm != "AES-128"
    }
    /// "AES-128-CCM (CryptoCell-310)": the candidate's name.
    pub fn label(&self) -> String {
        format!("{} ({})", self.algorithm, self.engine)
    }
    /// AES blocks of one AES-CCM message with `ad` bytes of associated data and `payload`
    /// bytes (NIST SP 800-38C): B0, the associated data with its 2-byte length encoding, the
    /// payload through CBC-MAC and CTR, and the counter block A0 that masks the tag.
    pub fn ccm_blocks(ad: usize, payload: usize) -> usize {
        let ad_blocks = if ad == 0 { 0 } else { (2 + ad).div_ceil(16) };
        1 + ad_blocks + 2 * payload.div_ceil(16) + 1
    }
    /// Cycles at the board's clock for one message (AES-CCM block count).
    pub fn cycles(&self, ad: usize, payload: usize) -> f64 {
        self.setup_cycles + self.block_cycles * Engine::ccm_blocks(ad, payload) as f64
    }
    /// The longest tag it makes, bytes.
    pub fn max_tag(&self) -> u32 {
        self.tag_bytes.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "chip,engine,algorithm,nonce_bytes,tag_bytes,link_frame,setup_cycles,block_cycles,engine_ma,\
        cpu,flash_bytes,ram_bytes,error_pct,call,status,source\n";

    fn row(fields: &str) -> String {
        format!("{HEAD}{fields}\n")
    }

    #[test]
    fn the_builtin_table_parses_with_the_boards_it_names() {
        let all = builtin();
        // By hand from data/crypto-engines.csv: five rows, three on the nRF52840.
        assert_eq!(all.len(), 5);
        let nrf: Vec<&str> = of_board("nrf52840").iter().map(|e| e.engine.as_str()).collect();
        assert_eq!(nrf, ["CCM peripheral", "ECB", "CryptoCell-310"]);
        assert_eq!(of_board("nano33ble").len(), 3, "the Nano 33 BLE carries the same chip");
        assert_eq!(
            of_board("esp32c3").iter().map(|e| e.label()).collect::<Vec<_>>(),
            ["AES-128-CCM (AES accelerator)"]
        );
        assert!(of_board("rp2040").is_empty() && of_board("mkrzero").is_empty(), "no AES engine on RP2040/SAMD21");
        assert!(of_board("no-such-board").is_empty());
        let ccm = &of_board("nrf52840")[0];
        assert_eq!((ccm.tag_bytes, ccm.nonce_bytes, ccm.link_frame), ((4, 4), (13, 13), false), "BLE's 4-byte MIC");
        let cc = &of_board("nrf52840")[2];
        assert_eq!((cc.tag_bytes, cc.nonce_bytes, cc.link_frame), ((4, 16), (7, 13), true));
        for e in all {
            assert!(e.source.len() > 100, "{}: the source says where each figure comes from", e.label());
            // every row here holds at least one estimate, and its source says what it is based on
            assert_eq!(e.status, "estimate");
            assert!(e.source.contains("stimate"), "{}", e.label());
        }
    }

    #[test]
    fn ccm_blocks_follow_sp_800_38c() {
        // By hand: 16 B of AD → B0 + ceil(18/16) = 2 AD blocks; 20 B payload → 2 CBC-MAC + 2 CTR
        // blocks; + A0 for the tag: 1 + 2 + 2 + 2 + 1 = 8.
        assert_eq!(Engine::ccm_blocks(16, 20), 8);
        // no AD, 16 B: B0 + 1 + 1 + A0 = 4; 14 B of AD fill exactly one block with its length.
        assert_eq!(Engine::ccm_blocks(0, 16), 4);
        assert_eq!(Engine::ccm_blocks(14, 0), 3);
        assert_eq!(Engine::ccm_blocks(15, 0), 4);
        let cc = of_board("nrf52840")[2];
        // 2000 + 30 × 8 cycles from the row's own figures
        assert_eq!(cc.cycles(16, 20), 2000.0 + 30.0 * 8.0);
    }

    #[test]
    fn bad_rows_name_the_line_and_column() {
        let good = "X,E,AES-128-CCM,7-13,4-16,yes,10,20,1,active,100,10,50,call,estimate,src";
        assert_eq!(parse(&row(good), "e.csv").unwrap().len(), 1);
        let cases = [
            (
                "X,E,AES-256-XTS,7-13,4-16,yes,10,20,1,active,100,10,50,call,estimate,src",
                "algorithm 'AES-256-XTS' is not one of",
            ),
            (
                "X,E,AES-128-CCM,13-7,4-16,yes,10,20,1,active,100,10,50,call,estimate,src",
                "nonce_bytes '13-7' is not N or LO-HI",
            ),
            (
                "X,E,AES-128-CCM,7-13,3-16,yes,10,20,1,active,100,10,50,call,estimate,src",
                "tag_bytes '3-16' is not N or LO-HI even",
            ),
            (
                "X,E,AES-128-CCM,13,4,yes,10,20,1,active,100,10,50,call,estimate,src",
                "link_frame 'yes' claims the link's",
            ),
            (
                "X,E,AES-128-CCM,7-13,4-16,maybe,10,20,1,active,100,10,50,call,estimate,src",
                "link_frame 'maybe' is not yes or no",
            ),
            (
                "X,E,AES-128-CCM,7-13,4-16,yes,-1,20,1,active,100,10,50,call,estimate,src",
                "setup_cycles '-1' is not a number",
            ),
            (
                "X,E,AES-128-CCM,7-13,4-16,yes,10,NaN,1,active,100,10,50,call,estimate,src",
                "block_cycles 'NaN' is not a number",
            ),
            (
                "X,E,AES-128-CCM,7-13,4-16,yes,10,20,1,idle,100,10,50,call,estimate,src",
                "cpu 'idle' is not active or sleep",
            ),
            (
                "X,E,AES-128-CCM,7-13,4-16,yes,10,20,1,active,100,10,50,call,measured,src",
                "status 'measured' is not datasheet",
            ),
            ("X,E,AES-128,7-13,4-16,no,10,20,1,active,100,10,50,call,estimate,src", "does not fit AES-128"),
            ("X,E,AES-128-CCM,7-13,4-16,yes,10,20,1,active,100,10,50,call,estimate,", "no source"),
        ];
        for (fields, want) in cases {
            let e = parse(&row(fields), "e.csv").unwrap_err();
            assert!(e.starts_with("e.csv: line 2: ") && e.contains(want), "{e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        let e = parse(&format!("{HEAD}{good}\nx,e,AES-128-CCM,13,4,no,1,1,1,active,1,1,1,c,estimate,s\n"), "e.csv")
            .unwrap_err();
        assert_eq!(e, "e.csv: line 3: x e AES-128-CCM appears twice");
        assert_eq!(parse("chip,engine\nX,E\n", "e.csv").unwrap_err(), "e.csv: missing column 'algorithm'");
    }
}
