//! vitest: a namesake whose path holds the repro's (vitest's file filter is
//! a substring), nested describes, it.each, odd characters, an unhandled
//! error after the test passed, a test file that does not load.

use crate::case::{Case, run, runners};
use crate::support::assert_has;

const SHOP: &str = "export const totalCents = (price: number, tip: number): number => price + Math.floor(tip / 100)\n";

const NAMESAKE: &str = "import { describe, it, expect } from 'vitest'\nimport { totalCents } from '../../src/shop'\n\ndescribe('cart', () => {\n  describe('total', () => {\n    it('keeps the tip', () => { expect(totalCents(100, 50)).toBe(150) })\n  })\n})\n";

fn repro(body: &str) -> String {
    format!(
        "import {{ describe, it, test, expect }} from 'vitest'\nimport {{ totalCents }} from './shop'\n\n{body}\n"
    )
}

#[test]
#[cfg_attr(
    not(any(loopwatch_ci, loopwatch_runner_js)),
    ignore = "needs vitest in tests/fixtures/checks/runners/node_modules (.ci/run: npm ci): runs when CI is set"
)]
fn vitest_verdicts_follow_its_json_report() {
    let nested = repro(
        "describe('cart', () => {\n  describe('total [a]', () => {\n    it('keeps the tip', () => { expect(totalCents(100, 50)).toBe(150) })\n  })\n})",
    );
    let passing = repro(
        "describe('cart', () => {\n  describe('total', () => {\n    it('keeps the tip', () => { expect(totalCents(100, 0)).toBe(100) })\n  })\n})",
    );
    let each = repro(
        "it.each([[50, 150]])('tip %i [half] gives %i', (tip, want) => { expect(totalCents(100, tip)).toBe(want) })",
    );
    let leak = repro(
        "it('passes but throws later', () => { setTimeout(() => { throw new Error('late boom') }, 1) })\nit('waits', async () => { await new Promise((r) => setTimeout(r, 50)) })",
    );
    let odd =
        repro("test('prints (a|b) $1 \"q\" ünï', () => { expect(totalCents(1, 100)).toBe(101) })");
    let f = run(&Case {
        test: "npx vitest --pool forks",
        files: &[
            (
                "package.json",
                "{ \"name\": \"shop\", \"private\": true, \"type\": \"module\" }\n",
            ),
            ("src/shop.ts", SHOP),
            ("web/src/cart.test.ts", NAMESAKE),
            (".gitignore", "node_modules\n"),
        ],
        links: &[("node_modules", runners().join("node_modules"))],
        buggy: "grep -q 'tip / 100' src/shop.ts",
        fix: "sed -i 's|Math.floor(tip / 100)|tip|' src/shop.ts",
        source: "src/shop.ts",
        repros: &[
            (
                "F1",
                "src/repro.test.ts::cart > total [a] > keeps the tip",
                &nested,
            ),
            (
                "F2",
                "src/cart.test.ts::cart > total > keeps the tip",
                &passing,
            ),
            (
                "F3",
                "src/repro_broken.test.ts::x",
                "import { nope } from './missing'\nimport { test } from 'vitest'\ntest('x', () => { nope() })\n",
            ),
            (
                "F4",
                "src/repro_each.test.ts::tip 50 [half] gives 150",
                &each,
            ),
            (
                "F5",
                "src/repro_leak.test.ts::passes but throws later",
                &leak,
            ),
            (
                "F6",
                "src/repro_odd.test.ts::prints (a|b) $1 \"q\" ünï",
                &odd,
            ),
            ("F7", "src/cart.test.ts::cart > no such test", ""),
        ],
    });
    f.assert_results(&[
        ("F1", "confirmed", ""),
        ("F2", "not-reproduced", ""),
        ("F3", "inconclusive", "no test ran: src/repro_broken.test.ts failed to run: Cannot find module './missing'"),
        ("F4", "confirmed", ""),
        ("F5", "inconclusive", "vitest's report says it passed, but its log does not prove it: the run reported a failure outside its tests"),
        ("F6", "confirmed", ""),
        ("F7", "inconclusive", "vitest ran no test by that name (src/cart.test.ts::cart > no such test)"),
    ]);
    f.assert_green(&["F1", "F4", "F6"]);
    // The namesake was left out by name, TEST's pool option kept.
    let log = f.log("verify-1-F2.test.log");
    assert_has(&log, "run --pool forks --reporter=verbose --reporter=json");
    assert_has(&log, "--exclude web/src/cart.test.ts src/cart.test.ts -t");
}
