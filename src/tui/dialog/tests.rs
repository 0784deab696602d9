//! Tests of the decision dialog.
