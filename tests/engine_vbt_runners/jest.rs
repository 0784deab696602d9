//! jest: nested describes, a namesake in another file, names that differ
//! only in case (jest's `-t` ignores case), it.each, odd characters, a test
//! file that does not load.

use crate::case::{Case, run, runners};
use crate::support::assert_has;

const SHOP: &str = "exports.totalCents = (price, tip) => price + Math.floor(tip / 100)\n";

const NAMESAKE: &str = "const { totalCents } = require('../src/shop')\n\ndescribe('cart', () => {\n  describe('total', () => {\n    it('keeps the tip', () => { expect(totalCents(100, 50)).toBe(150) })\n  })\n})\n";

fn repro(body: &str) -> String {
    format!("const {{ totalCents }} = require('./shop')\n\n{body}\n")
}

#[test]
#[cfg_attr(
    not(any(loopwatch_ci, loopwatch_runner_js)),
    ignore = "needs jest in tests/fixtures/checks/runners/node_modules (.ci/run: npm ci): runs when CI is set"
)]
fn jest_verdicts_follow_its_json_report() {
    let nested = repro(
        "describe('cart', () => {\n  describe('total', () => {\n    it('keeps the tip', () => { expect(totalCents(100, 50)).toBe(150) })\n  })\n})",
    );
    let passing = repro(
        "describe('cart', () => {\n  describe('total', () => {\n    it('keeps the tip', () => { expect(totalCents(100, 0)).toBe(100) })\n  })\n})",
    );
    let each = repro(
        "it.each([[50, 150]])('tip %i [half] gives %i', (tip, want) => { expect(totalCents(100, tip)).toBe(want) })",
    );
    let cases = repro(
        "describe('cart', () => {\n  it('works', () => { expect(totalCents(100, 0)).toBe(100) })\n  it('Works', () => { expect(totalCents(100, 50)).toBe(150) })\n})",
    );
    let odd =
        repro("test('prints (a|b) $1 \"q\" ünï', () => { expect(totalCents(1, 100)).toBe(101) })");
    let f = run(&Case {
        test: "npx jest --ci --maxWorkers 1",
        files: &[
            (
                "package.json",
                "{ \"name\": \"shop\", \"private\": true, \"jest\": { \"testEnvironment\": \"node\" } }\n",
            ),
            ("src/shop.js", SHOP),
            ("web/cart.test.js", NAMESAKE),
            (".gitignore", "node_modules\n"),
        ],
        links: &[("node_modules", runners().join("node_modules"))],
        buggy: "grep -q 'tip / 100' src/shop.js",
        fix: "sed -i 's|Math.floor(tip / 100)|tip|' src/shop.js",
        source: "src/shop.js",
        repros: &[
            (
                "F1",
                "src/repro.test.js::cart > total > keeps the tip",
                &nested,
            ),
            (
                "F2",
                "src/repro_pass.test.js::cart > total > keeps the tip",
                &passing,
            ),
            (
                "F3",
                "src/repro_broken.test.js::x",
                "const { nope } = require('./missing')\ntest('x', () => { nope() })\n",
            ),
            (
                "F4",
                "src/repro_each.test.js::tip 50 [half] gives 150",
                &each,
            ),
            ("F5", "src/repro_case.test.js::cart > works", &cases),
            (
                "F6",
                "src/repro_odd.test.js::prints (a|b) $1 \"q\" ünï",
                &odd,
            ),
            (
                "F7",
                "src/repro_pass.test.js::cart > total > no such test",
                "",
            ),
        ],
    });
    f.assert_results(&[
        ("F1", "confirmed", ""),
        ("F2", "not-reproduced", ""),
        ("F3", "inconclusive", "no test ran: src/repro_broken.test.js failed to run: Cannot find module './missing'"),
        ("F4", "confirmed", ""),
        ("F5", "inconclusive", "other tests named alike ran too, which the run does not tell from src/repro_case.test.js::cart > works: src/repro_case.test.js::cart > Works (failed)"),
        ("F6", "confirmed", ""),
        ("F7", "inconclusive", "jest ran no test by that name (src/repro_pass.test.js::cart > total > no such test)"),
    ]);
    f.assert_green(&["F1", "F4", "F6"]);
    let log = f.log("verify-1-F1.test.log");
    assert_has(
        &log,
        "npx --no -- jest --ci --maxWorkers 1 --verbose --json --outputFile=",
    );
}
