//! cargo test: each repro in its own target (`--lib`, `--bin`, `--test`),
//! so that one that does not build leaves the others their verdicts; a
//! module two test targets declare; nested modules; a namesake in another
//! target; TEST's options kept.

use crate::case::{Case, run};

const LIB: &str = "//! A price plus a tip, in cents.\npub mod money;\n\n/// A price plus a tip, in cents.\npub fn total_cents(price: u32, tip: u32) -> u32 {\n    price + tip / 100\n}\n";

const MONEY: &str = "/// Cents rounded to whole units.\npub fn round(cents: u32) -> u32 {\n    (cents + 50) / 100 * 100\n}\n";

const TILL: &str = "fn main() {\n    println!(\"{}\", shop::total_cents(100, 50));\n}\n";

const COMMON: &str = "pub fn helper() -> u32 {\n    1\n}\n";

#[test]
fn cargo_verdicts_follow_libtest_per_target() {
    let f = run(&Case {
        test: "cargo test --no-fail-fast -q -- --test-threads 1",
        files: &[
            (
                "Cargo.toml",
                "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
            ),
            (".gitignore", "/target\nCargo.lock\n"),
            ("src/lib.rs", LIB),
            ("src/money.rs", MONEY),
            ("src/bin/till.rs", TILL),
            ("tests/common/mod.rs", COMMON),
            (
                "tests/a.rs",
                "mod common;\n\n#[test]\nfn a() {\n    assert_eq!(common::helper(), 1);\n}\n",
            ),
            (
                "tests/b.rs",
                "mod common;\n\n#[test]\nfn b() {\n    assert_eq!(common::helper(), 1);\n}\n",
            ),
        ],
        links: &[],
        buggy: "grep -q 'tip / 100' src/lib.rs",
        fix: "sed -i 's|price + tip / 100|price + tip|' src/lib.rs",
        source: "src/lib.rs",
        repros: &[
            (
                "F1",
                "tests/repro.rs::total_keeps_the_tip",
                "#[test]\nfn total_keeps_the_tip() {\n    assert_eq!(shop::total_cents(100, 50), 150);\n}\n",
            ),
            (
                "F2",
                "src/money.rs::tests::rounds_half_up",
                "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn rounds_half_up() {\n        assert_eq!(super::round(150), 200);\n    }\n}\n",
            ),
            (
                "F3",
                "tests/repro_broken.rs::broken",
                "#[test]\nfn broken() {\n    shop::no_such_fn();\n}\n",
            ),
            (
                "F4",
                "tests/common/mod.rs::shared_repro",
                "\n#[test]\nfn shared_repro() {\n    assert_eq!(shop::total_cents(1, 100), 2);\n}\n",
            ),
            (
                "F5",
                "tests/repro_nested.rs::outer::inner::keeps_the_tip",
                "mod outer {\n    mod inner {\n        #[test]\n        fn keeps_the_tip() {\n            assert_eq!(shop::total_cents(1, 100), 101);\n        }\n    }\n}\n",
            ),
            (
                "F6",
                "src/bin/till.rs::tests::till_total",
                "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn till_total() {\n        assert_eq!(shop::total_cents(100, 50), 150);\n    }\n}\n",
            ),
            ("F7", "tests/repro.rs::no_such_test", ""),
            // F1's namesake in another target, passing: each runs alone.
            (
                "F8",
                "tests/repro_twin.rs::total_keeps_the_tip",
                "#[test]\nfn total_keeps_the_tip() {\n    assert_eq!(shop::total_cents(100, 0), 100);\n}\n",
            ),
        ],
    });
    f.assert_results(&[
        ("F1", "confirmed", ""),
        ("F2", "not-reproduced", ""),
        ("F3", "inconclusive", "no test ran"),
        (
            "F4",
            "inconclusive",
            "tests/common/mod.rs is in no test target",
        ),
        ("F5", "confirmed", ""),
        ("F6", "confirmed", ""),
        (
            "F7",
            "inconclusive",
            "cargo test ran no test by that name (tests/repro.rs::no_such_test), nor any other",
        ),
        ("F8", "not-reproduced", ""),
    ]);
    f.assert_green(&["F1", "F5", "F6"]);
    // TEST's options kept (its -q, whose output names no test, replaced).
    let log = f.log("verify-1-F2.test.log");
    assert!(log.contains("cargo test --no-fail-fast --lib money::tests::rounds_half_up -- --test-threads 1 --exact"), "{log}");
}
