//! What machine and build produced a result. Recorded in every `run.json`.
use std::fs;

/// The machine a run measured on.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu_model: String,
    /// Logical cores.
    pub logical_cores: usize,
    /// CPU flags relevant to the implementations (SIMD, TSC behaviour).
    pub cpu_flags: Vec<String>,
    /// cpufreq governor of cpu0, or why it is unknown.
    pub governor: String,
    /// Operating system.
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// Host name.
    pub hostname: String,
}

/// The build of the tool that measured.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Build {
    /// lwcbench version.
    pub tool_version: String,
    /// Commit built from.
    pub git_commit: String,
    /// rustc version.
    pub rustc: String,
    /// Cargo profile.
    pub profile: String,
    /// Optimisation level.
    pub opt_level: String,
    /// Target triple.
    pub target: String,
    /// RUSTFLAGS of the build.
    pub rustflags: String,
    /// Other compilers that built code in this binary (name → version and flags).
    pub other_compilers: Vec<(String, String)>,
}

fn cpuinfo_field(text: &str, key: &str) -> Option<String> {
    text.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string())
}

impl Machine {
    /// This machine, read from /proc and /sys.
    pub fn detect() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = cpuinfo_field(&cpuinfo, "flags").unwrap_or_default();
        let wanted = [
            "sse2",
            "avx2",
            "avx512f",
            "avx512vl",
            "aes",
            "vaes",
            "pclmulqdq",
            "sha_ni",
            "constant_tsc",
            "nonstop_tsc",
        ];
        let os = fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| cpuinfo_field(&t.replace('=', ":"), "PRETTY_NAME"))
            .map(|s| s.trim_matches('"').to_string())
            .unwrap_or_else(|| std::env::consts::OS.into());
        Machine {
            cpu_model: cpuinfo_field(&cpuinfo, "model name").unwrap_or_else(|| "unknown".into()),
            logical_cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            cpu_flags: wanted
                .iter()
                .filter(|f| flags.split_whitespace().any(|x| x == **f))
                .map(|s| s.to_string())
                .collect(),
            governor: fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unavailable (no cpufreq interface; typical of VMs)".into()),
            os,
            kernel: fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default(),
            hostname: fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default(),
        }
    }
}

impl Build {
    /// This binary's build, with the other compilers that built code in it.
    pub fn current(other_compilers: Vec<(String, String)>) -> Self {
        Build {
            tool_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: env!("LWCBENCH_GIT_COMMIT").into(),
            rustc: env!("LWCBENCH_RUSTC").into(),
            profile: env!("LWCBENCH_PROFILE").into(),
            opt_level: env!("LWCBENCH_OPT_LEVEL").into(),
            target: env!("LWCBENCH_TARGET").into(),
            rustflags: env!("LWCBENCH_RUSTFLAGS").into(),
            other_compilers,
        }
    }
}
