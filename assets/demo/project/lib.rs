//! The invoice tools are shell scripts (`src/*.sh`); this crate only
//! holds their tests (`tests/*.rs`).
