//! node's test runner: nested describes, a `t.test()` subtest (node runs it
//! only with its parent selected), names that end alike in two describes,
//! odd characters, a test file that does not load; TEST's options with
//! separate values kept.

use crate::case::{Case, run};

const SHOP: &str = "export const totalCents = (price, tip) => price + Math.floor(tip / 100)\n";

fn repro(body: &str) -> String {
    format!(
        "import {{ describe, it, test }} from 'node:test'\nimport assert from 'node:assert'\nimport {{ totalCents }} from '../shop.mjs'\n\n{body}\n"
    )
}

#[test]
#[cfg_attr(
    not(any(loopwatch_ci, loopwatch_runner_node)),
    ignore = "needs node 20 or later (.ci/run installs nodejs): runs when CI is set"
)]
fn node_verdicts_follow_its_tap_report() {
    let nested = repro(
        "describe('cart', () => {\n  describe('total', () => {\n    it('keeps the tip', () => { assert.strictEqual(totalCents(100, 50), 150) })\n    it('works', () => {})\n  })\n  it('reworks', () => {})\n})",
    );
    let passing = repro(
        "describe('cart', () => {\n  describe('total', () => {\n    it('keeps the tip', () => { assert.strictEqual(totalCents(100, 0), 100) })\n  })\n})",
    );
    let sub = repro(
        "test('parent', async (t) => {\n  await t.test('tip of 50 [half]', () => { assert.strictEqual(totalCents(100, 50), 150) })\n})",
    );
    let alike = repro(
        "describe('A', () => { it('works', () => {}) })\ndescribe('B', () => { it('works', () => { assert.strictEqual(totalCents(1, 100), 101) }) })",
    );
    let odd = repro(
        "test('prints (a|b) $1 \"q\" ünï \\\\ #', () => { assert.strictEqual(totalCents(1, 100), 101) })",
    );
    let f = run(&Case {
        test: "node --test --test-reporter spec --test-concurrency 1 test/",
        files: &[
            (
                "package.json",
                "{ \"name\": \"shop\", \"private\": true, \"type\": \"module\" }\n",
            ),
            ("shop.mjs", SHOP),
        ],
        links: &[],
        buggy: "grep -q 'tip / 100' shop.mjs",
        fix: "sed -i 's|Math.floor(tip / 100)|tip|' shop.mjs",
        source: "shop.mjs",
        repros: &[
            (
                "F1",
                "test/repro.test.mjs::cart > total > keeps the tip",
                &nested,
            ),
            (
                "F2",
                "test/repro_pass.test.mjs::cart > total > keeps the tip",
                &passing,
            ),
            (
                "F3",
                "test/repro_broken.test.mjs::x",
                "import { test } from 'node:test'\nthrow new Error('does not load')\n",
            ),
            (
                "F4",
                "test/repro_sub.test.mjs::parent > tip of 50 [half]",
                &sub,
            ),
            ("F5", "test/repro_alike.test.mjs::B > works", &alike),
            (
                "F6",
                "test/repro_odd.test.mjs::prints (a|b) $1 \"q\" ünï \\ #",
                &odd,
            ),
            ("F7", "test/repro_pass.test.mjs::cart > no such test", ""),
        ],
    });
    f.assert_results(&[
        ("F1", "confirmed", ""),
        ("F2", "not-reproduced", ""),
        ("F3", "inconclusive", "no test ran: a test file failed to load"),
        ("F4", "confirmed", ""),
        ("F5", "inconclusive", "other tests named alike ran too, which the run does not tell from test/repro_alike.test.mjs::B > works: test/repro_alike.test.mjs::A > works (passed)"),
        ("F6", "confirmed", ""),
        ("F7", "inconclusive", "node --test ran no test by that name (test/repro_pass.test.mjs::cart > no such test)"),
    ]);
    f.assert_green(&["F1", "F4", "F6"]);
    // TEST's reporter and concurrency kept with their values.
    let log = f.log("verify-1-F1.test.log");
    assert!(log.contains("node --test-reporter spec --test-concurrency 1 --test --test-reporter-destination=stdout --test-reporter=tap"), "{log}");
}
