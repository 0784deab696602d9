//! The `loopwatch` binary: parse the command line, hand over to the library.
//! The process supervisor (`__supervise`) is entered before any parsing:
//! one is started for every child loopwatch runs, and it should cost one
//! `exec` and little else.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).map(|a| a.as_os_str())
        == Some(loopwatch::process::supervise::SUBCOMMAND.as_ref())
    {
        return loopwatch::process::supervise::main(&args[2..]);
    }
    loopwatch::process::this_binary_supervises();
    loopwatch::cli::main()
}
