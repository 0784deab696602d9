//! The words of `[run] test` read the way each runner reads them: which
//! options take a value (separate or after `=`), which take one only when
//! the next word is not an option, which are flags; what is a positional
//! (a file or name filter). loopwatch keeps every option with its value
//! except those that choose the tests or the report it needs, which it
//! replaces; positionals are the user's selection and are replaced too.
//!
//! The tables follow each runner's own parser: argparse (pytest), yargs
//! (jest), cac/mri (vitest), Go's flag package, node's option parser,
//! cargo's clap and libtest's getopts. For parsers that give an unknown
//! option the next word (mri, yargs), so does [`split`].

/// One option or positional of a command line, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The option's name (`--reporter`, `-k`), empty for a positional.
    pub name: String,
    /// Its value, when it has one.
    pub value: Option<String>,
    /// The words it was written as (one, or the option and its value).
    pub words: Vec<String>,
}

impl Arg {
    /// A positional (a file or a filter).
    pub fn is_positional(&self) -> bool {
        self.name.is_empty()
    }
}

/// How a runner reads its options.
pub struct Table {
    /// Options that always take a value.
    pub value: &'static [&'static str],
    /// Options whose value is optional: the next word is theirs unless it
    /// starts with `-` (argparse's `nargs='?'`, cac's `[value]`).
    pub optional: &'static [&'static str],
    /// Flags: never the next word (unless `true`/`false` with `bool_words`).
    pub flags: &'static [&'static str],
    /// An option the table does not know takes the next word when it is
    /// not an option (mri, yargs); else it is a flag.
    pub unknown_takes_value: bool,
    /// A flag may be followed by `true` or `false` (yargs).
    pub bool_words: bool,
    /// `-kEXPR`: a short option's value may follow it in the same word.
    pub short_attached: bool,
    /// Long options are written with one dash (`-run`, `-tags`: Go).
    pub single_dash: bool,
}

/// The options and positionals of `words` (up to a `--`, returned apart).
pub fn split(words: &[String], table: &Table) -> (Vec<Arg>, Option<Vec<String>>) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if w == "--" {
            return (out, Some(words[i + 1..].to_vec()));
        }
        if !w.starts_with('-') || w == "-" {
            out.push(Arg {
                name: String::new(),
                value: None,
                words: vec![w.clone()],
            });
            i += 1;
            continue;
        }
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (w.clone(), None),
        };
        let key = normal(&name, table);
        if let Some(value) = inline {
            out.push(Arg {
                name,
                value: Some(value),
                words: vec![w.clone()],
            });
            i += 1;
            continue;
        }
        // `-kEXPR`, `-n4`, `-pno:cacheprovider`.
        if table.short_attached && !w.starts_with("--") && w.chars().count() > 2 {
            let short: String = w.chars().take(2).collect();
            if table.value.contains(&short.as_str()) || table.optional.contains(&short.as_str()) {
                out.push(Arg {
                    value: Some(w[short.len()..].to_string()),
                    name: short,
                    words: vec![w.clone()],
                });
                i += 1;
                continue;
            }
        }
        let next = words.get(i + 1).filter(|n| *n != "--");
        let takes = if table.value.contains(&key.as_str()) {
            next.is_some()
        } else if table.optional.contains(&key.as_str()) {
            next.is_some_and(|n| !n.starts_with('-'))
        } else if table.flags.contains(&key.as_str()) || key.starts_with("--no-") {
            table.bool_words && next.is_some_and(|n| n == "true" || n == "false")
        } else {
            table.unknown_takes_value && next.is_some_and(|n| !n.starts_with('-'))
        };
        match (takes, next) {
            (true, Some(v)) => {
                out.push(Arg {
                    name,
                    value: Some(v.clone()),
                    words: vec![w.clone(), v.clone()],
                });
                i += 2;
            }
            _ => {
                out.push(Arg {
                    name,
                    value: None,
                    words: vec![w.clone()],
                });
                i += 1;
            }
        }
    }
    (out, None)
}

/// The table key of an option: Go accepts `--flag` for `-flag`.
fn normal(name: &str, table: &Table) -> String {
    match (table.single_dash, name.strip_prefix("--")) {
        (true, Some(rest)) => format!("-{rest}"),
        _ => name.to_string(),
    }
}

/// The option's name as the table knows it (`--flag` → `-flag` for Go).
pub fn key(arg: &Arg, table: &Table) -> String {
    normal(&arg.name, table)
}

/// `cargo test`'s options (cargo's own, before `--`).
pub const CARGO: Table = Table {
    value: &[
        "--bin",
        "--example",
        "--test",
        "--bench",
        "-p",
        "--package",
        "--exclude",
        "-F",
        "--features",
        "-j",
        "--jobs",
        "--profile",
        "--target",
        "--target-dir",
        "--manifest-path",
        "--message-format",
        "--color",
        "--config",
        "-Z",
        "--lockfile-path",
    ],
    optional: &[],
    flags: &[
        "--lib",
        "--bins",
        "--tests",
        "--examples",
        "--benches",
        "--all-targets",
        "--doc",
        "--workspace",
        "--all",
        "--no-run",
        "--no-fail-fast",
        "-r",
        "--release",
        "--all-features",
        "--no-default-features",
        "--offline",
        "--locked",
        "--frozen",
        "-q",
        "--quiet",
        "-v",
        "--verbose",
        "--ignore-rust-version",
        "--future-incompat-report",
        "--keep-going",
        "--unit-graph",
        "--timings",
    ],
    unknown_takes_value: false,
    bool_words: false,
    short_attached: false,
    single_dash: false,
};

/// cargo's options loopwatch replaces: the targets and packages (it picks
/// the repro's), `--no-run`, and `-q` (libtest's terse output names no test).
pub const CARGO_REPLACED: &[&str] = &[
    "--bin",
    "--example",
    "--test",
    "--bench",
    "--lib",
    "--bins",
    "--tests",
    "--examples",
    "--benches",
    "--all-targets",
    "--doc",
    "--workspace",
    "--all",
    "--exclude",
    "-p",
    "--package",
    "--manifest-path",
    "--no-run",
    "-q",
    "--quiet",
];

/// `cargo nextest run`'s options that take a value (nextest's and the cargo
/// build options it passes on).
pub const NEXTEST: Table = Table {
    value: &[
        "-E",
        "--filterset",
        "--filter-expr",
        "-P",
        "--profile",
        "-j",
        "--test-threads",
        "--retries",
        "--build-jobs",
        "--message-format",
        "--message-format-version",
        "--partition",
        "--run-ignored",
        "--status-level",
        "--final-status-level",
        "--failure-output",
        "--success-output",
        "--max-fail",
        "--archive-file",
        "--workspace-remap",
        "--cargo-message-format",
        "--bin",
        "--example",
        "--test",
        "--bench",
        "--exclude",
        "-p",
        "--package",
        "-F",
        "--features",
        "--cargo-profile",
        "--target",
        "--target-dir",
        "--manifest-path",
        "--color",
        "--config",
        "-Z",
        "--tool-config-file",
        "--binaries-metadata",
        "--cargo-metadata",
        "--target-dir-remap",
        "--show-progress",
        "--stress-count",
        "--stress-duration",
        "--config-file",
    ],
    optional: &[],
    flags: &[],
    unknown_takes_value: false,
    bool_words: false,
    short_attached: false,
    single_dash: false,
};

/// Of nextest's options, those that are cargo build options `cargo test`
/// takes too (`--cargo-profile` is cargo's `--profile`).
pub const NEXTEST_CARGO: &[&str] = &[
    "-F",
    "--features",
    "--all-features",
    "--no-default-features",
    "--release",
    "-r",
    "--cargo-profile",
    "--target",
    "--target-dir",
    "--offline",
    "--locked",
    "--frozen",
    "--config",
    "-Z",
    "--ignore-rust-version",
];

/// libtest's options (after `--`).
pub const LIBTEST: Table = Table {
    value: &[
        "--test-threads",
        "--skip",
        "--logfile",
        "--format",
        "--color",
        "-Z",
        "--shuffle-seed",
    ],
    optional: &[],
    flags: &[],
    unknown_takes_value: false,
    bool_words: false,
    short_attached: false,
    single_dash: false,
};

/// libtest's options loopwatch replaces: filters and how they match, the
/// ignored tests, listing, the output format it reads.
pub const LIBTEST_REPLACED: &[&str] = &[
    "--exact",
    "--skip",
    "--ignored",
    "--include-ignored",
    "--list",
    "-q",
    "--quiet",
    "--format",
];

/// pytest's options (its own and the common plugins').
pub const PYTEST: Table = Table {
    value: &[
        "-k",
        "-m",
        "-p",
        "-c",
        "-o",
        "-r",
        "-W",
        "-n",
        "--confcutdir",
        "--rootdir",
        "--basetemp",
        "--override-ini",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--junitxml",
        "--junit-xml",
        "--junit-prefix",
        "--maxfail",
        "--durations",
        "--durations-min",
        "--tb",
        "--show-capture",
        "--capture",
        "--import-mode",
        "--log-level",
        "--log-format",
        "--log-date-format",
        "--log-cli-level",
        "--log-cli-format",
        "--log-cli-date-format",
        "--log-file",
        "--log-file-level",
        "--log-file-format",
        "--log-file-date-format",
        "--log-file-mode",
        "--pastebin",
        "--pythonwarnings",
        "--cov-report",
        "--cov-config",
        "--cov-fail-under",
        "--cov-context",
        "--timeout",
        "--timeout-method",
        "--dist",
        "--numprocesses",
        "--maxprocesses",
        "--tx",
        "--rsyncdir",
        "--reruns",
        "--reruns-delay",
        "--only-rerun",
        "--count",
        "--repeat-scope",
        "--randomly-seed",
        "--html",
        "--css",
        "--json-report-file",
        "--alluredir",
        "--asyncio-mode",
        "--verbosity",
        "--config-file",
        "--inifile",
        "--ds",
        "--dc",
        "--lfnf",
        "--last-failed-no-failures",
    ],
    optional: &["--cov", "--debug", "--pdbcls"],
    flags: &[],
    unknown_takes_value: false,
    bool_words: false,
    short_attached: true,
    single_dash: false,
};

/// pytest's options loopwatch replaces: the selection (`-k`, `-m`,
/// deselections, last-failed and stepwise runs, module names), listing
/// instead of running, and the junit report it writes itself.
pub const PYTEST_REPLACED: &[&str] = &[
    "-k",
    "-m",
    "--deselect",
    "--lf",
    "--last-failed",
    "--lfnf",
    "--last-failed-no-failures",
    "--sw",
    "--stepwise",
    "--sw-skip",
    "--stepwise-skip",
    "--pyargs",
    "--co",
    "--collect-only",
    "--fixtures",
    "--fixtures-per-test",
    "--markers",
    "--setup-plan",
    "--setup-only",
    "--junitxml",
    "--junit-xml",
    "--junit-prefix",
    "-h",
    "--help",
    "--version",
    "-V",
];

/// jest's options (jest-cli 29's).
pub const JEST: Table = Table {
    value: &[
        "--cacheDirectory",
        "--changedSince",
        "--collectCoverageFrom",
        "-c",
        "--config",
        "--coverageDirectory",
        "--coverageProvider",
        "--coverageThreshold",
        "--env",
        "--filter",
        "--globalSetup",
        "--globalTeardown",
        "--globals",
        "--haste",
        "--maxConcurrency",
        "-w",
        "--maxWorkers",
        "--moduleNameMapper",
        "--notifyMode",
        "--openHandlesTimeout",
        "--outputFile",
        "--preset",
        "--prettierPath",
        "--resolver",
        "--rootDir",
        "--runner",
        "--seed",
        "--shard",
        "--testEnvironment",
        "--testEnvironmentOptions",
        "--testFailureExitCode",
        "-t",
        "--testNamePattern",
        "--testResultsProcessor",
        "--testRunner",
        "--testSequencer",
        "--testTimeout",
        "--transform",
        "--coveragePathIgnorePatterns",
        "--coverageReporters",
        "--ignoreProjects",
        "--moduleDirectories",
        "--moduleFileExtensions",
        "--modulePathIgnorePatterns",
        "--modulePaths",
        "--projects",
        "--reporters",
        "--roots",
        "--selectProjects",
        "--setupFiles",
        "--setupFilesAfterEnv",
        "--snapshotSerializers",
        "--testMatch",
        "--testPathIgnorePatterns",
        "--testPathPattern",
        "--testRegex",
        "--transformIgnorePatterns",
        "--unmockedModulePathPatterns",
        "--watchPathIgnorePatterns",
    ],
    optional: &[],
    flags: &[
        "--all",
        "--automock",
        "-b",
        "--bail",
        "--cache",
        "--changedFilesWithAncestor",
        "--ci",
        "--clearCache",
        "--clearMocks",
        "--collectCoverage",
        "--color",
        "--colors",
        "--coverage",
        "--debug",
        "--detectLeaks",
        "--detectOpenHandles",
        "--errorOnDeprecated",
        "-e",
        "--expand",
        "--findRelatedTests",
        "--forceExit",
        "--init",
        "--injectGlobals",
        "--json",
        "--lastCommit",
        "--listTests",
        "--logHeapUsage",
        "--noStackTrace",
        "--notify",
        "-o",
        "--onlyChanged",
        "-f",
        "--onlyFailures",
        "--passWithNoTests",
        "--randomize",
        "--resetMocks",
        "--resetModules",
        "--restoreMocks",
        "-i",
        "--runInBand",
        "--runTestsByPath",
        "--showConfig",
        "--showSeed",
        "--silent",
        "--skipFilter",
        "--testLocationInResults",
        "-u",
        "--updateSnapshot",
        "--useStderr",
        "--verbose",
        "--watch",
        "--watchAll",
        "--watchman",
        "--workerThreads",
    ],
    unknown_takes_value: true,
    bool_words: true,
    short_attached: false,
    single_dash: false,
};

/// jest's options loopwatch replaces: the selection (name and path
/// patterns, changed or failed files, shards, filters), watching, listing,
/// and the JSON report it writes itself.
pub const JEST_REPLACED: &[&str] = &[
    "-t",
    "--testNamePattern",
    "--testPathPattern",
    "--testPathIgnorePatterns",
    "--findRelatedTests",
    "--onlyChanged",
    "-o",
    "--onlyFailures",
    "-f",
    "--changedSince",
    "--lastCommit",
    "--changedFilesWithAncestor",
    "--shard",
    "--filter",
    "--listTests",
    "--watch",
    "--watchAll",
    "--json",
    "--outputFile",
    "--runTestsByPath",
    "--showConfig",
    "--clearCache",
    "--init",
];

/// vitest's flags (4.1's; every other option takes a value, as mri reads them).
pub const VITEST: Table = Table {
    value: &[
        "-r",
        "--root",
        "-c",
        "--config",
        "-t",
        "--testNamePattern",
        "--dir",
        "--reporter",
        "--outputFile",
    ],
    optional: &[
        "-u",
        "--update",
        "--api",
        "--silent",
        "--changed",
        "--inspect",
        "--inspectBrk",
        "--mergeReports",
        "--listTags",
        "--json",
    ],
    flags: &[
        "-v",
        "--version",
        "-w",
        "--watch",
        "--ui",
        "--open",
        "--hideSkippedTests",
        "--coverage",
        "--coverage.enabled",
        "--coverage.clean",
        "--coverage.cleanOnRerun",
        "--coverage.reportOnFailure",
        "--coverage.allowExternal",
        "--coverage.skipFull",
        "--coverage.thresholds.100",
        "--coverage.thresholds.perFile",
        "--coverage.excludeAfterRemap",
        "--isolate",
        "--globals",
        "--dom",
        "--browser.enabled",
        "--browser.headless",
        "--browser.isolate",
        "--browser.ui",
        "--browser.fileParallelism",
        "--browser.trackUnhandledErrors",
        "--browser.locators.exact",
        "--fileParallelism",
        "--passWithNoTests",
        "--logHeapUsage",
        "--detectAsyncLeaks",
        "--allowOnly",
        "--dangerouslyIgnoreUnhandledErrors",
        "--sequence.shuffle",
        "--sequence.shuffle.files",
        "--sequence.shuffle.tests",
        "--sequence.concurrent",
        "--diff.expand",
        "--diff.includeChangeCounts",
        "--diff.omitAnnotationLines",
        "--diff.printBasicPrototype",
        "--expandSnapshotDiff",
        "--disableConsoleIntercept",
        "--typecheck",
        "--typecheck.enabled",
        "--typecheck.only",
        "--typecheck.allowJs",
        "--typecheck.ignoreSourceErrors",
        "--cache",
        "--expect",
        "--expect.requireAssertions",
        "--expect.poll",
        "--printConsoleTrace",
        "--includeTaskLocation",
        "--run",
        "--no-color",
        "--clearScreen",
        "--standalone",
        "--clearCache",
        "--strictTags",
        "-h",
        "--help",
        "--filesOnly",
        "--staticParse",
        "--experimental.fsModuleCache",
        "--experimental.importDurations",
        "--experimental.importDurations.failOnDanger",
        "--experimental.viteModuleRunner",
        "--experimental.nodeLoader",
        "--experimental.preParse",
    ],
    unknown_takes_value: true,
    bool_words: false,
    short_attached: false,
    single_dash: false,
};

/// vitest's options loopwatch replaces: the name filter, watching, servers
/// and UIs that never end, runs that do not run the tests (changed files,
/// merged reports, listings), shards.
pub const VITEST_REPLACED: &[&str] = &[
    "-t",
    "--testNamePattern",
    "-w",
    "--watch",
    "--ui",
    "--open",
    "--api",
    "--standalone",
    "--changed",
    "--mergeReports",
    "--listTags",
    "--shard",
    "--inspect",
    "--inspectBrk",
    "--clearCache",
    "--filesOnly",
    "--json",
    "-h",
    "--help",
    "-v",
    "--version",
];

/// node's options that take a value (node 20 to 24).
pub const NODE: Table = Table {
    value: &[
        "--allow-fs-read",
        "--allow-fs-write",
        "--build-snapshot-config",
        "-C",
        "--conditions",
        "--cpu-prof-dir",
        "--cpu-prof-interval",
        "--cpu-prof-name",
        "--diagnostic-dir",
        "--disable-proto",
        "--disable-warning",
        "--dns-result-order",
        "--env-file",
        "--env-file-if-exists",
        "-e",
        "--eval",
        "-p",
        "--print",
        "--experimental-default-type",
        "--loader",
        "--experimental-loader",
        "--experimental-policy",
        "--experimental-sea-config",
        "--experimental-config-file",
        "--heap-prof-dir",
        "--heap-prof-interval",
        "--heap-prof-name",
        "--heapsnapshot-near-heap-limit",
        "--heapsnapshot-signal",
        "--icu-data-dir",
        "--import",
        "--input-type",
        "--debug-port",
        "--inspect-port",
        "--inspect-publish-uid",
        "--localstorage-file",
        "--max-http-header-size",
        "--network-family-autoselection-attempt-timeout",
        "--openssl-config",
        "--policy-integrity",
        "--redirect-warnings",
        "--report-directory",
        "--report-dir",
        "--report-filename",
        "--report-signal",
        "-r",
        "--require",
        "--run",
        "--secure-heap",
        "--secure-heap-min",
        "--snapshot-blob",
        "--test-concurrency",
        "--test-coverage-branches",
        "--test-coverage-exclude",
        "--test-coverage-functions",
        "--test-coverage-include",
        "--test-coverage-lines",
        "--test-global-setup",
        "--test-isolation",
        "--test-name-pattern",
        "--test-reporter",
        "--test-reporter-destination",
        "--test-shard",
        "--test-skip-pattern",
        "--test-timeout",
        "--title",
        "--tls-cipher-list",
        "--tls-keylog",
        "--trace-event-categories",
        "--trace-event-file-pattern",
        "--trace-require-module",
        "--unhandled-rejections",
        "--use-largepages",
        "--v8-pool-size",
        "--watch-path",
        "--watch-kill-signal",
    ],
    optional: &[],
    flags: &[],
    unknown_takes_value: false,
    bool_words: false,
    short_attached: false,
    single_dash: false,
};

/// node's options loopwatch replaces: the name filters, shards, watching,
/// `.only` tests, code given on the command line.
pub const NODE_REPLACED: &[&str] = &[
    "--test-name-pattern",
    "--test-skip-pattern",
    "--test-shard",
    "--watch",
    "--watch-path",
    "--test-only",
    "-e",
    "--eval",
    "-p",
    "--print",
    "--run",
];

/// `go test`'s flags that take a value (build and test flags).
pub const GO: Table = Table {
    value: &[
        "-p",
        "-asmflags",
        "-buildmode",
        "-compiler",
        "-gccgoflags",
        "-gcflags",
        "-installsuffix",
        "-ldflags",
        "-mod",
        "-modfile",
        "-overlay",
        "-pgo",
        "-pkgdir",
        "-tags",
        "-toolexec",
        "-exec",
        "-o",
        "-coverpkg",
        "-covermode",
        "-coverprofile",
        "-cpuprofile",
        "-memprofile",
        "-memprofilerate",
        "-outputdir",
        "-vet",
        "-run",
        "-skip",
        "-bench",
        "-benchtime",
        "-count",
        "-cpu",
        "-list",
        "-parallel",
        "-timeout",
        "-shuffle",
        "-fuzz",
        "-fuzztime",
        "-fuzzminimizetime",
        "-fuzzcachedir",
        "-blockprofile",
        "-blockprofilerate",
        "-mutexprofile",
        "-mutexprofilefraction",
        "-trace",
        "-C",
    ],
    optional: &[],
    flags: &[],
    unknown_takes_value: false,
    bool_words: false,
    short_attached: false,
    single_dash: true,
};

/// go's flags loopwatch replaces: the selection (`-run`, `-skip`,
/// benchmarks, fuzzing, listing), `-count`, runs that do not run tests
/// (`-c`, `-n`, `-o`), and `-json`/`-v`, which it sets.
pub const GO_REPLACED: &[&str] = &[
    "-run", "-skip", "-bench", "-list", "-fuzz", "-count", "-c", "-n", "-o", "-json", "-v", "-i",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shlex::split(s).unwrap()
    }

    fn shown(s: &str, t: &Table) -> Vec<(String, Option<String>)> {
        split(&words(s), t)
            .0
            .into_iter()
            .map(|a| (a.name, a.value))
            .collect()
    }

    fn pair(n: &str, v: Option<&str>) -> (String, Option<String>) {
        (n.to_string(), v.map(str::to_string))
    }

    #[test]
    fn values_are_kept_with_their_options() {
        assert_eq!(
            shown(
                "--test-reporter spec --import x.mjs --test-concurrency 2 test/",
                &NODE
            ),
            [
                pair("--test-reporter", Some("spec")),
                pair("--import", Some("x.mjs")),
                pair("--test-concurrency", Some("2")),
                pair("", None),
            ]
        );
        assert_eq!(
            shown("-q -kslow -n 4 --cov src tests/ -p no:randomly", &PYTEST),
            [
                pair("-q", None),
                pair("-k", Some("slow")),
                pair("-n", Some("4")),
                pair("--cov", Some("src")),
                pair("", None),
                pair("-p", Some("no:randomly")),
            ]
        );
        assert_eq!(
            shown("--cov --tb=short", &PYTEST),
            [pair("--cov", None), pair("--tb", Some("short"))]
        );
        // mri: an unknown option takes the next word; a known flag does not.
        assert_eq!(
            shown("--coverage src/ --pool threads --maxWorkers 2", &VITEST),
            [
                pair("--coverage", None),
                pair("", None),
                pair("--pool", Some("threads")),
                pair("--maxWorkers", Some("2")),
            ]
        );
        // yargs: a flag may take true or false.
        assert_eq!(
            shown("--verbose false --ci src", &JEST),
            [
                pair("--verbose", Some("false")),
                pair("--ci", None),
                pair("", None)
            ]
        );
        assert_eq!(
            shown("-race --tags integration -count=2 ./...", &GO),
            [
                pair("-race", None),
                pair("--tags", Some("integration")),
                pair("-count", Some("2")),
                pair("", None),
            ]
        );
        let (args, rest) = split(&words("--release -- --nocapture x"), &CARGO);
        assert_eq!(args.len(), 1);
        assert_eq!(rest.unwrap(), ["--nocapture", "x"]);
    }
}
