//! `lwcbench._native`: thin PyO3 bindings over the catalog, the engine and the application
//! layer (`lwcbench-app`, which the CLI calls too). All cipher logic, measurement and result
//! writing stay in the Rust crates; this file only converts arguments and errors. The public
//! Python API (with docstrings) is `lwcbench/__init__.py`.
#![warn(missing_docs, clippy::unwrap_used)]
use std::path::PathBuf;
use std::sync::Mutex;

use lwcbench_app::ErrorKind;
use lwcbench_catalog::{registry, Entry, Make, VerifyCtx};
use lwcbench_core::{BitOrder, CipherError};
use lwcbench_engine::request::RunOptions;
use lwcbench_engine::session;
use lwcbench_engine::studies;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple, PyType};

/// One measurement at a time per process: two Python threads measuring at once would
/// disturb each other's timings.
static RUN_LOCK: Mutex<()> = Mutex::new(());

/// The exception types, made when the module is imported: `LwcbenchError` and below it
/// `InputError` and `AuthenticationError` (also `ValueError`s, as every error here was before
/// they existed) and `ServiceError`.
static BASE_ERR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INPUT_ERR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static AUTH_ERR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static SERVICE_ERR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The exception of `kind` with message `msg` (a ValueError if the types are not made yet,
/// which cannot happen after the module's import).
fn kind_err(kind: ErrorKind, msg: String) -> PyErr {
    let cell = match kind {
        ErrorKind::Input => &INPUT_ERR,
        ErrorKind::Authentication => &AUTH_ERR,
        ErrorKind::Service => &SERVICE_ERR,
    };
    Python::attach(|py| match cell.get(py) {
        Some(t) => PyErr::from_type(t.bind(py).clone(), msg),
        None => PyValueError::new_err(msg),
    })
}

/// Bad input: raises `InputError`.
fn value_err(e: impl std::fmt::Display) -> PyErr {
    kind_err(ErrorKind::Input, e.to_string())
}

/// An error message of the application layer, raised as the exception of its kind
/// ([`lwcbench_app::classify`]).
fn app_err(e: impl std::fmt::Display) -> PyErr {
    let msg = e.to_string();
    kind_err(lwcbench_app::classify(&msg), msg)
}

/// A new exception class `name(bases)` of module `lwcbench`, with its docstring.
fn new_type<'py>(
    py: Python<'py>,
    name: &str,
    bases: Vec<Bound<'py, PyAny>>,
    doc: &str,
) -> PyResult<Bound<'py, PyType>> {
    let dict = PyDict::new(py);
    dict.set_item("__module__", "lwcbench")?;
    dict.set_item("__doc__", doc)?;
    let t = py.get_type::<PyType>().call1((name, PyTuple::new(py, bases)?, dict))?;
    Ok(t.cast_into::<PyType>()?)
}

/// "Name/impl" (case-insensitive) or a bare name, which picks the first registered
/// implementation of that algorithm.
fn find_entry(cipher_id: &str) -> PyResult<Entry> {
    let want = cipher_id.trim();
    match lwcbench_catalog::find(want) {
        Some(e) => Ok(e),
        None => Err(value_err(format!(
            "unknown cipher '{cipher_id}' (use a name or name/implementation from lwcbench.ciphers())"
        ))),
    }
}

fn cipher_err(id: &str, e: CipherError) -> PyErr {
    let kind = if e == CipherError::AuthenticationFailed { ErrorKind::Authentication } else { ErrorKind::Input };
    kind_err(kind, format!("{id}: {e}"))
}

#[pyfunction]
fn ciphers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for e in registry() {
        let i = &e.info;
        let d = PyDict::new(py);
        d.set_item("id", e.id())?;
        d.set_item("cipher", i.name)?;
        d.set_item("implementation", i.implementation)?;
        d.set_item("family", i.family.as_str())?;
        d.set_item("key_bits", i.key_bits)?;
        d.set_item("iv_bits", i.iv_bits)?;
        d.set_item("block_bits", i.block_bits)?;
        d.set_item("tag_bits", i.tag_bits)?;
        d.set_item("state_bytes", i.state_bytes)?;
        d.set_item("origin", i.origin.to_string())?;
        d.set_item("language", i.language.as_str())?;
        d.set_item(
            "bit_order",
            match i.bit_order {
                BitOrder::MsbFirst => "msb-first",
                BitOrder::LsbFirst => "lsb-first",
            },
        )?;
        d.set_item("bit_granular", i.bit_granular)?;
        d.set_item("note", i.note)?;
        out.append(d)?;
    }
    Ok(out)
}

#[pyfunction]
fn presets_list(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for p in studies::ALL {
        let d = PyDict::new(py);
        d.set_item("name", p.name())?;
        d.set_item("about", p.about())?;
        d.set_item("reps", p.reps())?;
        d.set_item("warmup", p.warmup())?;
        out.append(d)?;
    }
    Ok(out)
}

#[pyfunction]
fn keystream<'py>(
    py: Python<'py>,
    cipher_id: &str,
    key: &[u8],
    iv: &[u8],
    nbits: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let e = find_entry(cipher_id)?;
    let Some(Make::Stream(make)) = e.make else {
        return Err(value_err(format!(
            "{}: keystream needs a stream cipher, this is a {} cipher",
            e.id(),
            e.info.family.as_str()
        )));
    };
    let mut c = make();
    c.init(key, iv).map_err(|x| cipher_err(&e.id(), x))?;
    let mut out = vec![0u8; nbits.div_ceil(8)];
    c.keystream_bits(&mut out, nbits).map_err(|x| cipher_err(&e.id(), x))?;
    Ok(PyBytes::new(py, &out))
}

/// Shared by encrypt and decrypt: stream XOR is its own inverse, block is raw ECB.
fn crypt(cipher_id: &str, key: &[u8], iv: &[u8], data: &[u8], ad: &[u8], decrypt: bool) -> PyResult<Vec<u8>> {
    let e = find_entry(cipher_id)?;
    let id = e.id();
    let Some(made) = e.make else {
        return Err(value_err(format!("{id}: not an implementation of this process")));
    };
    match made {
        Make::Stream(make) => {
            if !ad.is_empty() {
                return Err(value_err(format!("{id}: associated data needs an AEAD; this is a stream cipher")));
            }
            let mut c = make();
            c.init(key, iv).map_err(|x| cipher_err(&id, x))?;
            let mut buf = data.to_vec();
            c.apply(&mut buf).map_err(|x| cipher_err(&id, x))?;
            Ok(buf)
        }
        Make::Block(make) => {
            if !iv.is_empty() || !ad.is_empty() {
                return Err(value_err(format!(
                    "{id}: block ciphers take no IV or associated data here (raw ECB); pass iv=b''"
                )));
            }
            let mut c = make();
            c.set_key(key).map_err(|x| cipher_err(&id, x))?;
            let bs = e.info.block_bytes();
            if bs == 0 || !data.len().is_multiple_of(bs) {
                let err = CipherError::DataLength { got: data.len() };
                return Err(value_err(format!("{id}: {err} (ECB needs a whole number of {bs}-byte blocks)")));
            }
            let mut buf = data.to_vec();
            for b in buf.chunks_exact_mut(bs) {
                if decrypt {
                    c.decrypt_block(b)
                } else {
                    c.encrypt_block(b)
                }
            }
            Ok(buf)
        }
        Make::Mode(make) => {
            if !ad.is_empty() {
                return Err(value_err(format!("{id}: associated data needs an AEAD; this is an unauthenticated mode")));
            }
            let mut c = make();
            c.set_key(key).map_err(|x| cipher_err(&id, x))?;
            let mut buf = data.to_vec();
            if decrypt {
                let n = c.decrypt(iv, &mut buf).map_err(|x| cipher_err(&id, x))?;
                buf.truncate(n);
            } else {
                buf.resize(c.ciphertext_len(data.len()), 0);
                let n = c.encrypt(iv, &mut buf, data.len()).map_err(|x| cipher_err(&id, x))?;
                buf.truncate(n);
            }
            Ok(buf)
        }
        Make::Aead(make) => {
            let mut c = make();
            c.set_key(key).map_err(|x| cipher_err(&id, x))?;
            let tl = e.info.tag_bytes();
            if decrypt {
                if data.len() < tl {
                    let err = CipherError::TagLength { expected: tl, got: data.len() };
                    return Err(value_err(format!("{id}: {err} (input must be the ciphertext followed by the tag)")));
                }
                let (ct, tag) = data.split_at(data.len() - tl);
                let mut buf = ct.to_vec();
                c.decrypt(iv, ad, &mut buf, tag).map_err(|x| cipher_err(&id, x))?;
                Ok(buf)
            } else {
                let mut buf = data.to_vec();
                let mut tag = vec![0u8; tl];
                c.encrypt(iv, ad, &mut buf, &mut tag).map_err(|x| cipher_err(&id, x))?;
                buf.extend_from_slice(&tag);
                Ok(buf)
            }
        }
    }
}

#[pyfunction]
#[pyo3(signature = (cipher_id, key, iv, data, ad=b"".as_slice()))]
fn encrypt<'py>(
    py: Python<'py>,
    cipher_id: &str,
    key: &[u8],
    iv: &[u8],
    data: &[u8],
    ad: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &crypt(cipher_id, key, iv, data, ad, false)?))
}

#[pyfunction]
#[pyo3(signature = (cipher_id, key, iv, data, ad=b"".as_slice()))]
fn decrypt<'py>(
    py: Python<'py>,
    cipher_id: &str,
    key: &[u8],
    iv: &[u8],
    data: &[u8],
    ad: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &crypt(cipher_id, key, iv, data, ad, true)?))
}

fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The `lwcbench run` options (`lwcbench_engine::request::RUN_OPTIONS`), for the test that
/// checks `lwcbench.run` accepts every one of them.
#[pyfunction]
fn run_options() -> Vec<&'static str> {
    lwcbench_engine::request::RUN_OPTIONS.to_vec()
}

#[pyfunction]
#[pyo3(signature = (preset=None, cipher=Vec::new(), implementation=Vec::new(), scenario=Vec::new(), sizes=Vec::new(),
    kiv=Vec::new(), reps=None, warmup=None, seed=None, out=None, force=false, key=None, iv=None, min_sample_us=None, call=Vec::new(),
    progress=None, all=false, payload=None, dataset=None, channels=Vec::new(), encoding="float32".to_string(),
    byte_order="be".to_string(), layout="interleaved".to_string(), readings=None, report=true,
    dataset_encoding="utf8".to_string(), power_profile=None, watts=None, board=None, energy_from=None, video=None, frames=None, engine=Vec::new(),
    weights=None, budget=Vec::new(), repeat=1, counter="time".to_string(), twin=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    preset: Option<String>,
    cipher: Vec<String>,
    implementation: Vec<String>,
    scenario: Vec<String>,
    sizes: Vec<usize>,
    kiv: Vec<String>,
    reps: Option<usize>,
    warmup: Option<usize>,
    seed: Option<u64>,
    out: Option<PathBuf>,
    force: bool,
    key: Option<Vec<u8>>,
    iv: Option<Vec<u8>>,
    min_sample_us: Option<f64>,
    call: Vec<String>,
    progress: Option<Py<PyAny>>,
    all: bool,
    payload: Option<String>,
    dataset: Option<PathBuf>,
    channels: Vec<String>,
    encoding: String,
    byte_order: String,
    layout: String,
    readings: Option<usize>,
    report: bool,
    dataset_encoding: String,
    power_profile: Option<String>,
    watts: Option<f64>,
    board: Option<String>,
    energy_from: Option<PathBuf>,
    video: Option<PathBuf>,
    frames: Option<usize>,
    engine: Vec<String>,
    weights: Option<String>,
    budget: Vec<String>,
    repeat: usize,
    counter: String,
    twin: Option<u64>,
) -> PyResult<String> {
    // --counter instructions re-executes the command line under callgrind, and --repeat writes
    // several directories: both are command-line workflows (the Python call returns one run).
    if counter == "instructions" {
        return Err(value_err(
            "--counter instructions: only from the command line (lwcbench run), which it re-executes",
        ));
    }
    if repeat > 1 {
        return Err(value_err(format!("--repeat: {repeat} runs: only from the command line (lwcbench run --repeat)")));
    }
    let opts = RunOptions {
        preset,
        cipher,
        implementation,
        scenario,
        sizes: sizes.iter().map(|s| s.to_string()).collect(),
        kiv,
        reps,
        warmup,
        seed,
        key: key.as_deref().map(to_hex),
        iv: iv.as_deref().map(to_hex),
        min_sample_us,
        out,
        force,
        all,
        payload,
        dataset,
        dataset_encoding: Some(dataset_encoding),
        channels,
        encoding: Some(encoding),
        byte_order: Some(byte_order),
        layout: Some(layout),
        readings,
        power_profile,
        watts,
        board,
        energy_from,
        video,
        frames,
        engine,
        weights,
        budget,
        repeat: Some(repeat),
        counter: Some(counter),
        twin,
        // run.json records how the run was asked for: the Python call, not the interpreter's argv.
        args: Some(if call.is_empty() { vec!["lwcbench.run()".into()] } else { call }),
    };
    // The application layer's resolver: with the study's extras (ics-latency's in-cycle rows).
    let resolved = py.detach(|| lwcbench_app::run::resolve(&opts)).map_err(app_err)?;
    for w in &resolved.warnings {
        eprintln!("lwcbench: {w}");
    }
    let outcome = measure(py, &resolved.request, progress, report)?;
    let dir = outcome.dir.canonicalize().unwrap_or(outcome.dir);
    dir.into_os_string()
        .into_string()
        .map_err(|d| PyRuntimeError::new_err(format!("result directory {d:?} is not UTF-8")))
}

/// Run a resolved request, one at a time per process. Measuring takes seconds to hours: other
/// Python threads run meanwhile. The progress callback re-attaches briefly, at most every
/// 200 ms (and for the last sample), so it does not disturb the timing loop; its first
/// exception stops the callbacks and is raised when the run ends.
/// With `report`, through the application layer as `lwcbench run` (report.html in the unit).
fn measure(
    py: Python<'_>,
    req: &session::Request,
    progress: Option<Py<PyAny>>,
    report: bool,
) -> PyResult<session::Outcome> {
    let mut cb_err: Option<PyErr> = None;
    let outcome = py.detach(|| {
        let _one_at_a_time = RUN_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut last: Option<std::time::Instant> = None;
        let tick = |done: u64, total: u64, label: &str| {
            let Some(cb) = &progress else { return };
            if cb_err.is_some() {
                return;
            }
            let due = last.is_none_or(|t| t.elapsed() >= std::time::Duration::from_millis(200)) || done == total;
            if !due {
                return;
            }
            last = Some(std::time::Instant::now());
            Python::attach(|py| {
                if let Err(e) = cb.call1(py, (done, total, label)) {
                    cb_err = Some(e);
                }
            });
        };
        // as `lwcbench run`: report.html in the run's unit and listed in its run.json
        lwcbench_app::run::measure_with(req, report, tick)
    });
    if let Some(e) = cb_err {
        return Err(e);
    }
    outcome.map_err(app_err)
}

#[pyfunction]
#[pyo3(signature = (cipher=Vec::new(), vectors=None, torture_loops=lwcbench_catalog::torture::LOOPS))]
fn verify(
    py: Python<'_>,
    cipher: Vec<String>,
    vectors: Option<PathBuf>,
    torture_loops: usize,
) -> PyResult<Bound<'_, PyList>> {
    let mut ctx = VerifyCtx::discover();
    if let Some(v) = vectors {
        if !v.join("README.md").is_file() {
            return Err(value_err(format!("vectors: {} is not a vector folder (no README.md)", v.display())));
        }
        ctx.vectors = Some(v);
    }
    let entries: Vec<Entry> =
        registry().into_iter().filter(|e| cipher.is_empty() || cipher.iter().any(|c| e.matches(c))).collect();
    if entries.is_empty() {
        return Err(value_err(format!("cipher: no implementation matches {cipher:?}")));
    }
    // The application layer's checks (the torture included), as `lwcbench verify`.
    let checks = py.detach(|| {
        entries.iter().flat_map(|e| lwcbench_app::verify::checks(e, &ctx, torture_loops).0).collect::<Vec<_>>()
    });
    let out = PyList::empty(py);
    for c in checks {
        let d = PyDict::new(py);
        d.set_item("ok", c.ok())?;
        d.set_item("id", c.id)?;
        d.set_item("what", c.what)?;
        d.set_item("passed", c.passed)?;
        d.set_item("failures", c.failures)?;
        d.set_item("skipped", c.skipped)?;
        out.append(d)?;
    }
    Ok(out)
}

#[pyfunction]
fn report(py: Python<'_>, dir: PathBuf) -> PyResult<String> {
    let p = py.detach(|| lwcbench_report::write_report(&dir)).map_err(value_err)?;
    Ok(p.display().to_string())
}

#[pyfunction]
fn vectors_dir() -> Option<String> {
    VerifyCtx::discover().vectors.map(|p| p.display().to_string())
}

/// `lwcbench choose` (lwcbench_choose::choose, the CLI's call): the answer as JSON text.
#[pyfunction]
#[pyo3(signature = (board, radio, interval, payload="16B".to_string(), flash=None, ram=None, security=128, tag=128,
    require=None, weights=None, lifetime="10y".to_string(), allow_provisional=false, allow_variable_time=false,
    chemistry="alkaline-AA".to_string(), battery_mah=2400.0, battery_v=3.0, region=None, sleep_ua=None, active_ma=None,
    boards=None, radios=None, dtim=None, framing=None, edhoc=false, cipher=None, out=None, force=false))]
#[allow(clippy::too_many_arguments)]
fn choose(
    py: Python<'_>,
    board: String,
    radio: String,
    interval: String,
    payload: String,
    flash: Option<String>,
    ram: Option<String>,
    security: u32,
    tag: u32,
    require: Option<String>,
    weights: Option<String>,
    lifetime: String,
    allow_provisional: bool,
    allow_variable_time: bool,
    chemistry: String,
    battery_mah: f64,
    battery_v: f64,
    region: Option<String>,
    sleep_ua: Option<f64>,
    active_ma: Option<f64>,
    boards: Option<PathBuf>,
    radios: Option<PathBuf>,
    dtim: Option<u32>,
    framing: Option<String>,
    edhoc: bool,
    cipher: Option<String>,
    out: Option<PathBuf>,
    force: bool,
) -> PyResult<String> {
    use lwcbench_choose as ch;
    let o = ch::Options {
        board,
        radio,
        interval,
        payload,
        flash,
        ram,
        security,
        tag,
        require,
        weights,
        lifetime,
        allow_provisional,
        allow_variable_time,
        chemistry,
        battery_mah,
        battery_v,
        region,
        sleep_ua,
        active_ma,
        boards: boards.map(|p| p.display().to_string()),
        radios: radios.map(|p| p.display().to_string()),
        dtim,
        framing,
        edhoc,
        cipher,
    };
    py.detach(|| {
        let (rep, _) = lwcbench_app::choose::answer(&o, out.as_deref(), force)?;
        ch::render::json::json_compact(&rep)
    })
    .map_err(app_err)
}

/// Absolute form of a result directory, as text.
fn dir_text(dir: PathBuf) -> PyResult<String> {
    let dir = dir.canonicalize().unwrap_or(dir);
    dir.into_os_string()
        .into_string()
        .map_err(|d| PyRuntimeError::new_err(format!("result directory {d:?} is not UTF-8")))
}

/// `lwcbench link ARGS` (the application layer's parser and verb, as the CLI): the result
/// directory written, or None for what writes none (a gateway or device process, keys).
#[pyfunction]
fn link(py: Python<'_>, argv: Vec<String>) -> PyResult<Option<String>> {
    let mut a: lwcbench_app::link::LinkArgs = lwcbench_app::parse("link", &argv).map_err(value_err)?;
    let out = a.fix_out();
    py.detach(|| lwcbench_app::link::run(&a)).map_err(app_err)?;
    out.map(dir_text).transpose()
}

/// `lwcbench mcu ARGS`: runs into the `--out` the arguments name.
#[pyfunction]
#[pyo3(signature = (argv, call=None))]
fn mcu(py: Python<'_>, argv: Vec<String>, call: Option<Vec<String>>) -> PyResult<()> {
    let mut a: lwcbench_app::mcu::McuArgs = lwcbench_app::parse("mcu", &argv).map_err(value_err)?;
    // run.json records the Python call, not the interpreter's command line
    a.invocation = call;
    py.detach(|| lwcbench_app::mcu::run(&a)).map_err(app_err)
}

/// `lwcbench mcu check-board ARGS` (ARGS without the subcommand's name): the comparison's
/// rows (dicts), the CLI's text, and its missing and notes lines. Prints nothing.
#[pyfunction]
fn mcu_check_board<'py>(py: Python<'py>, argv: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    let full: Vec<String> = std::iter::once("check-board".to_string()).chain(argv).collect();
    let a: lwcbench_app::mcu::McuArgs = lwcbench_app::parse("mcu", &full).map_err(value_err)?;
    let c = py
        .detach(|| lwcbench_app::mcu::check_board(&a))
        .ok_or_else(|| value_err("mcu check-board: the arguments name another subcommand"))?
        .map_err(app_err)?;
    let rows = PyList::empty(py);
    for r in &c.rows {
        let d = PyDict::new(py);
        d.set_item("cipher", &r.cipher)?;
        d.set_item("implementation", &r.implementation)?;
        d.set_item("phase", &r.phase)?;
        d.set_item("from", if r.from_counter { "counter" } else { "clock" })?;
        d.set_item("board_16_bytes", r.board[0])?;
        d.set_item("emulated_16_bytes", r.emulated[0])?;
        d.set_item("error_16_bytes_pct", lwcbench_app::check_board::error_pct(r.emulated[0], r.board[0]))?;
        d.set_item("board_128_bytes", r.board[1])?;
        d.set_item("emulated_128_bytes", r.emulated[1])?;
        d.set_item("error_128_bytes_pct", lwcbench_app::check_board::error_pct(r.emulated[1], r.board[1]))?;
        d.set_item("board_per_byte", r.board_slope())?;
        d.set_item("emulated_per_byte", r.emulated_slope())?;
        d.set_item("error_per_byte_pct", r.slope_error_pct())?;
        rows.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("rows", rows)?;
    out.set_item("text", c.render())?;
    out.set_item("missing", &c.missing)?;
    out.set_item("notes", &c.notes)?;
    Ok(out)
}

/// `lwcbench collect ARGS`: the result directory written.
#[pyfunction]
#[pyo3(signature = (argv, call=None))]
fn collect(py: Python<'_>, argv: Vec<String>, call: Option<Vec<String>>) -> PyResult<String> {
    let mut a: lwcbench_app::collect::CollectArgs = lwcbench_app::parse("collect", &argv).map_err(value_err)?;
    a.invocation = call;
    dir_text(py.detach(|| lwcbench_app::collect::collect(&a)).map_err(app_err)?)
}

/// `lwcbench compare A B --margin M`: the rows (dicts), the text table and the warnings; the
/// HTML page is written to `html` when given.
#[pyfunction]
#[pyo3(signature = (a, b, margin, html=None))]
fn compare<'py>(
    py: Python<'py>,
    a: PathBuf,
    b: PathBuf,
    margin: f64,
    html: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let c = py.detach(|| lwcbench_app::compare::compare_dirs(&a, &b, margin)).map_err(app_err)?;
    if let Some(h) = &html {
        lwcbench_engine::results::write_atomic_to(h, c.html.as_bytes(), "html").map_err(value_err)?;
    }
    let rows = PyList::empty(py);
    for r in &c.rows {
        let d = PyDict::new(py);
        d.set_item("cipher", &r.cipher)?;
        d.set_item("implementation", &r.implementation)?;
        d.set_item("scenario", &r.scenario)?;
        d.set_item("kiv", &r.kiv)?;
        d.set_item("size_bits", r.size_bits)?;
        d.set_item("a_median_ns", r.a_median_ns)?;
        d.set_item("b_median_ns", r.b_median_ns)?;
        d.set_item("ratio", r.ratio)?;
        d.set_item("ratio_lo", r.ratio_lo)?;
        d.set_item("ratio_hi", r.ratio_hi)?;
        d.set_item("p", r.p)?;
        d.set_item("verdict", &r.verdict)?;
        rows.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("rows", rows)?;
    out.set_item("text", &c.text)?;
    out.set_item("warnings", &c.warnings)?;
    Ok(out)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(ciphers, m)?)?;
    m.add_function(wrap_pyfunction!(presets_list, m)?)?;
    m.add_function(wrap_pyfunction!(keystream, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_options, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(vectors_dir, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(choose, m)?)?;
    m.add_function(wrap_pyfunction!(link, m)?)?;
    m.add_function(wrap_pyfunction!(mcu, m)?)?;
    m.add_function(wrap_pyfunction!(mcu_check_board, m)?)?;
    m.add_function(wrap_pyfunction!(collect, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    let py = m.py();
    let value_error = py.get_type::<PyValueError>().into_any();
    let base = new_type(py, "LwcbenchError", vec![py.get_type::<PyException>().into_any()], "Every lwcbench error.")?;
    let b = || base.clone().into_any();
    let input = new_type(
        py,
        "InputError",
        vec![b(), value_error.clone()],
        "Bad input: an option, a file or a directory (the message names it).",
    )?;
    let auth = new_type(
        py,
        "AuthenticationError",
        vec![b(), value_error],
        "A tag that does not verify: forged or corrupted data, or the wrong key. No plaintext is returned.",
    )?;
    let service = new_type(py, "ServiceError", vec![b()], "A broker or store that cannot be reached or fails in use.")?;
    for (name, t, cell) in [
        ("LwcbenchError", &base, &BASE_ERR),
        ("InputError", &input, &INPUT_ERR),
        ("AuthenticationError", &auth, &AUTH_ERR),
        ("ServiceError", &service, &SERVICE_ERR),
    ] {
        m.add(name, t)?;
        let _ = cell.set(py, t.clone().unbind());
    }
    Ok(())
}
