//! The JSON Schemas under schemas/ are generated from the Rust types; this
//! fails when they drift. `LOOPWATCH_UPDATE_SCHEMAS=1 cargo test --test schemas`
//! rewrites them.

use std::path::Path;

#[test]
fn committed_schemas_match_the_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
    let update = std::env::var_os("LOOPWATCH_UPDATE_SCHEMAS").is_some();
    for (name, schema) in loopwatch::schema::all() {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run with LOOPWATCH_UPDATE_SCHEMAS=1)",
                path.display()
            )
        });
        assert_eq!(
            committed, text,
            "{name} drifted from the types: run LOOPWATCH_UPDATE_SCHEMAS=1 cargo test --test schemas"
        );
    }
}

#[test]
fn every_schema_compiles() {
    for (name, schema) in loopwatch::schema::all() {
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn a_verify_green_line_validates_and_a_wrong_result_does_not() {
    let schema = loopwatch::schema::for_kind(loopwatch::schema::FileKind::Journal);
    let v = jsonschema::validator_for(&schema).unwrap();
    let line = serde_json::json!({"v": 1, "seq": 9, "at": "2026-12-01T00:00:00Z", "type": "verify.green",
        "iteration": 2, "finding": "F1", "testRef": "tests/repro_f1.rs::f1", "result": "weakened",
        "log": "green-2-F1.test.log", "note": "ASSERT_DROP tests/repro_f1.rs:3"});
    assert!(
        v.is_valid(&line),
        "{:?}",
        v.iter_errors(&line)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    let mut wrong = line.clone();
    wrong["result"] = "blue".into();
    assert!(!v.is_valid(&wrong));
    let parsed = loopwatch::model::Event::parse_line(line.to_string().as_bytes()).unwrap();
    assert_eq!(parsed.body.type_name(), "verify.green");
    assert_eq!(parsed.to_value(), line, "round trip");
}
