//! The review stage of `loopwatch run`, between GATE 1 and GATE 2: the
//! reviewer's review, the finding-verifier graph, triage, and
//! verify-by-test. Each step is a `Next` the rules produce; this module only
//! carries them out.

pub mod single_test;
pub mod vbt_answer;
pub mod vbt_cleanup;
pub mod vbt_exec;
pub mod vbt_input;
pub mod vbt_invocation;
pub mod vbt_judge;
pub mod vbt_recheck;
pub mod vbt_tree;
pub mod verify_by_test;
