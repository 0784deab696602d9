//! The loop engine behind `loopwatch run`: it reads `loopwatch.toml`,
//! folds the journal, and does what the rules say comes next, dispatching
//! agents as child processes and recording every step through the same
//! recorder the CLI uses. It holds no rule of its own.

pub mod adapter;
pub mod attention;
pub mod config;
pub mod contract;
pub mod dispatch;
pub mod driver;
pub mod error;
pub mod lock;
pub mod readonly;
pub mod review;
pub mod roles;

pub use driver::{Finish, Options, run};
pub use error::{EngineError, Refusal};
