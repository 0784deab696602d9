//! Red tests handed to the developer and proven green afterwards: when the
//! recheck is due, and which results go back to the developer as gaps.

use crate::model::state::State;

/// The iteration whose red tests must be rerun now (its developer dispatch
/// succeeded and no `verify.green` was recorded for them yet), if any.
pub fn pending(_s: &State) -> Option<u32> {
    None
}

/// Gap lines for the developer: every red test whose recheck was not green.
pub fn gaps(_s: &State) -> Vec<String> {
    Vec::new()
}
