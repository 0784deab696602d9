//! The real agent CLIs in tests: where `.ci/run` installed them, and a
//! private home for each test that points them at a [`ModelServer`] and
//! stops every other traffic.
//!
//! Claude Code reads `ANTHROPIC_BASE_URL` and any `ANTHROPIC_API_KEY`;
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_TELEMETRY`,
//! `DISABLE_AUTOUPDATER` and `DISABLE_ERROR_REPORTING` stop the rest, and
//! `CLAUDE_CODE_MAX_RETRIES` keeps its retries short. Codex reads
//! `$CODEX_HOME/config.toml`: a model provider at the server's `/v1`
//! (Responses API), retries kept short, update checks, analytics and
//! feedback off. Codex refuses to set up its helpers under the system
//! temporary folder, so the homes live under Cargo's `CARGO_TARGET_TMPDIR`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::model_server::ModelServer;

/// The model named in the tests (the scripted server answers any).
pub const CLAUDE_MODEL: &str = "claude-sonnet-4-5";
/// The model named in the tests (one of Codex's catalog, so Codex offers
/// the tools it offers that model: `exec_command`, freeform `apply_patch`).
pub const CODEX_MODEL: &str = "gpt-5.5";

/// The folder `.ci/run` installs the CLIs' executables into.
pub fn bin_dir() -> PathBuf {
    PathBuf::from(env!("LOOPWATCH_CLIS_BIN"))
}

/// The installed CLI `name` (`claude`, `codex`); fails the test naming how
/// to install it when it is not there.
pub fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.exists(),
        "{} is not installed: `.ci/run` installs Claude Code and Codex into target/clis (or LOOPWATCH_CLIS)",
        p.display()
    );
    p
}

/// A test's private homes for the CLIs.
pub struct CliHome {
    _dir: tempfile::TempDir,
    /// `HOME` (Claude Code keeps `~/.claude` here).
    pub home: PathBuf,
    /// `CODEX_HOME`.
    pub codex_home: PathBuf,
    anthropic: String,
}

impl CliHome {
    /// Homes whose CLIs talk to `server` only.
    pub fn new(server: &ModelServer) -> CliHome {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        std::fs::create_dir_all(&base).expect("CARGO_TARGET_TMPDIR");
        let dir = tempfile::tempdir_in(&base).expect("a home under CARGO_TARGET_TMPDIR");
        let home = dir.path().join("home");
        let codex_home = dir.path().join("codex-home");
        std::fs::create_dir_all(&home).expect("HOME");
        std::fs::create_dir_all(&codex_home).expect("CODEX_HOME");
        let config = format!(
            r#"model = "{CODEX_MODEL}"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.scripted]
name = "scripted model server"
base_url = "{}/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 2
stream_idle_timeout_ms = 120000
"#,
            server.url()
        );
        std::fs::write(codex_home.join("config.toml"), config).expect("codex config");
        // Codex runs commands in a login shell, which starts from the
        // system's PATH: the profile of this home puts the test's back
        // (cargo, the CLIs), as a person's own profile would.
        let profile = format!(
            "export PATH={}\n",
            shlex::try_quote(&std::env::var("PATH").unwrap_or_default()).expect("PATH quotes")
        );
        std::fs::write(home.join(".profile"), profile).expect("HOME/.profile");
        CliHome {
            _dir: dir,
            home,
            codex_home,
            anthropic: server.url(),
        }
    }

    /// Sets the CLIs' environment on `cmd` (a `loopwatch run`, whose agents
    /// inherit it), the installed CLIs first on `PATH`.
    pub fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let path = format!(
            "{}:{}",
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        for k in [
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "XDG_CACHE_HOME",
            "XDG_CONFIG_HOME",
        ] {
            cmd.env_remove(k);
        }
        // The test's HOME hides the toolchain's: keep rustup's and Cargo's
        // homes where they are (the test command is `cargo test`).
        let real_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
        let keep = |var: &str, default: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .unwrap_or_else(|| real_home.join(default))
        };
        cmd.env("RUSTUP_HOME", keep("RUSTUP_HOME", ".rustup"))
            .env("CARGO_HOME", keep("CARGO_HOME", ".cargo"));
        cmd.env("PATH", path)
            .env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home)
            .env("ANTHROPIC_BASE_URL", &self.anthropic)
            .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
            .env("SCRIPTED_API_KEY", "sk-scripted")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "2")
            .env("NO_COLOR", "1")
    }

    /// Where `loopwatch run` puts the read-only roles' build folders
    /// (under this `HOME`).
    pub fn build_root(&self) -> PathBuf {
        self.home.join(".cache/loopwatch/build")
    }
}

/// `<bin>/<cli> --version`, trimmed (`2.1.332 (Claude Code)`, `codex-cli 0.171.0`).
pub fn version(cli: &str, home: &CliHome) -> String {
    let out = Command::new(bin(cli))
        .arg("--version")
        .env("HOME", &home.home)
        .env("CODEX_HOME", &home.codex_home)
        .output()
        .expect("--version");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// True when `dir` holds a file named `name` anywhere below it.
pub fn holds_file(dir: &Path, name: &str) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().any(|e| {
        let p = e.path();
        e.file_name() == name || (p.is_dir() && holds_file(&p, name))
    })
}
