//! The terminal UI: app state, actions, keymap, screens and the decision dialog.
//!
//! Data flows one way: the feeds ([`crate::watch::Feed`]) read and fold the
//! journal into their store; the event loop (`run`, `controller`) hands the
//! state at the position shown, with a shared handle on the events up to it,
//! to [`App::on_state`] (live: the newest position; replay: a seek); keys
//! become [`Action`]s through the [`Keymap`]; [`App::update`] changes the
//! app and returns [`Effect`]s (write a decision, copy, load a log, ring,
//! move the replay position) for the event loop to perform; [`rows`] says
//! what each row holds, and [`view::render`] draws a frame as a pure
//! function of the app. Nothing in here but the event loop does I/O.

pub mod action;
pub mod app;
pub mod clock;
pub mod code_pane;
pub mod config;
pub mod controller;
pub mod dialog;
pub mod diff;
pub mod effect;
pub(crate) mod input;
pub mod keymap;
pub mod looked;
pub mod pager;
pub mod replay;
pub mod rows;
pub mod run;
pub mod terminal;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod theme;
pub mod tone;
pub mod view;

pub use action::Action;
pub use app::App;
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::Config;
pub use effect::{DecisionRequest, Effect};
pub use keymap::Keymap;
pub use run::{ReplayStart, run_fleet, run_live, run_live_engine, run_replay};
