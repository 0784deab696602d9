//! The Findings tab on a run whose second review raised a finding again.

use crate::model::Event;
use crate::tui::app::Tab;
use crate::tui::rows::{self, RowKey};
use crate::tui::testkit::*;

fn events() -> Vec<Event> {
    let f1 = r#"{"id":"F1","severity":"major","path":"src/a.rs","lines":"20-25","claim":"An export with no invoices indexes rows[0] and panics instead of writing a header","verdict":"FALSE","evidence":"a.rs:22 guards it"}"#;
    let again = r#"{"id":"F3","severity":"blocking","path":"src/a.rs","lines":"26","claim":"When the invoice list is empty the export panics on rows[0] instead of writing the header","verdict":"FALSE","evidence":"a.rs:22 guards it","raisedAgain":{"iteration":1,"finding":"F1","round":1,"outcome":"false","verdict":"FALSE","evidence":"a.rs:22 guards it","why":"the finding verifier found it FALSE: a.rs:22 guards it","similarity":61}}"#;
    let lines = [
        r#"{"type":"run.started","run":{"id":"r","contract":"c.md","diff":"HEAD","engine":true,"review":{"verifyByTest":false,"maxFindings":3}}}"#.to_string(),
        format!(r#"{{"type":"findings.verified","iteration":1,"findings":[{f1}]}}"#),
        r#"{"type":"review.finished","iteration":1,"round":1,"blocking":[],"gaps":0}"#.into(),
        format!(r#"{{"type":"findings.verified","iteration":2,"findings":[{again}]}}"#),
    ];
    crate::model::test_journal::events(&lines)
}

#[test]
fn a_finding_raised_again_is_marked_and_lists_the_rounds_it_was_seen_in() {
    let (mut app, _clock) = app_with(&events());
    app.on_key(&ch('2'));
    assert_eq!(app.tab(), Tab::Findings);
    assert_eq!(app.shown_iteration(), 2);
    let texts: Vec<String> = rows::cells_of(&app, RowKey::Finding(0))
        .into_iter()
        .map(|c| c.text)
        .collect();
    assert_eq!(texts[0], "F3");
    assert_eq!(texts[3], "↺ raised again");
    assert_eq!(texts[5], "r1 r2");
    assert!(rows::row_text(&app, RowKey::Finding(0)).contains("r1 r2"));
}
