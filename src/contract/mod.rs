//! Contract edits made on a person's behalf: when an out-of-scope file is
//! approved, the file joins the contract's FILE SCOPE with the marker
//! `[gated YYYY-MM-DD]`.
//!
//! [`gate_path`] is the pure edit over bytes (only the changed or added
//! line differs); [`gate_path_in_file`] applies it to a contract on disk
//! atomically, and only onto the content it read. This module never
//! touches the terminal and never writes anything but the contract.

mod entry;
mod error;
mod file;
pub mod judged;
mod scope;
mod text;

pub use error::ScopeError;
pub use file::{ContractEditOutcome, RETRIES, gate_path_in_file, gate_path_in_file_with_hook};
pub use scope::{ScopeEdit, gate_path, is_date_shaped};

/// Today's date in the local time zone, `YYYY-MM-DD` (the date of a marker).
pub fn today_local() -> String {
    jiff::ZonedDateTime::now().strftime("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests;
