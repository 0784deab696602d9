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
