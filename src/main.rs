//! The `loopwatch` binary: parse the command line, hand over to the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    loopwatch::cli::main()
}
