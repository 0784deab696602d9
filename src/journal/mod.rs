//! The `.pipeline` store: discovery, locked append, state snapshot, tail
//! reading. Every writer goes through [`append`].
