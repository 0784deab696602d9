//! go test: a namesake in another package, subtests with spaces, brackets
//! and odd characters (go rewrites blanks to `_`), nested subtests, a
//! package that does not build beside others that do.

use crate::case::{Case, run};

const CART: &str = "package cart\n\n// TotalCents is a price plus a tip, in cents.\nfunc TotalCents(price, tip int) int { return price + tip/100 }\n";

const NAMESAKE: &str = "package invoice\n\nimport (\n\t\"testing\"\n\n\t\"example.com/shop/cart\"\n)\n\nfunc TestTotal(t *testing.T) {\n\tif cart.TotalCents(100, 50) != 150 {\n\t\tt.Fatal(\"the tip is lost\")\n\t}\n}\n";

fn repro(body: &str) -> String {
    format!("package cart\n\nimport \"testing\"\n\n{body}\n")
}

#[test]
#[cfg_attr(
    not(any(loopwatch_ci, loopwatch_runner_go)),
    ignore = "needs go (.ci/run: apt-get install golang-go): runs when CI is set"
)]
fn go_verdicts_follow_its_json_stream() {
    let total = repro(
        "func TestTotal(t *testing.T) {\n\tif TotalCents(100, 50) != 150 {\n\t\tt.Fatal(\"the tip is lost\")\n\t}\n}",
    );
    let passing = repro(
        "func TestNoTip(t *testing.T) {\n\tif TotalCents(100, 0) != 100 {\n\t\tt.Fatal(\"no tip\")\n\t}\n}",
    );
    let subtests = repro(
        "func TestDiscount(t *testing.T) {\n\tt.Run(\"tip of 50 [half]\", func(t *testing.T) {\n\t\tif TotalCents(100, 50) != 150 {\n\t\t\tt.Fatal(\"the tip is lost\")\n\t\t}\n\t})\n\tt.Run(\"no tip\", func(t *testing.T) {})\n}",
    );
    let nested = repro(
        "func TestNested(t *testing.T) {\n\tt.Run(\"outer\", func(t *testing.T) {\n\t\tt.Run(\"inner one\", func(t *testing.T) {\n\t\t\tif TotalCents(1, 100) != 101 {\n\t\t\t\tt.Fatal(\"the tip is lost\")\n\t\t\t}\n\t\t})\n\t\tt.Run(\"inner two\", func(t *testing.T) {})\n\t})\n}",
    );
    let odd = repro(
        "func TestOdd(t *testing.T) {\n\tt.Run(`(a|b) $1 \"q\" ünï`, func(t *testing.T) {\n\t\tif TotalCents(1, 100) != 101 {\n\t\t\tt.Fatal(\"the tip is lost\")\n\t\t}\n\t})\n}",
    );
    let f = run(&Case {
        test: "go test -count=2 -vet=off ./...",
        files: &[
            ("go.mod", "module example.com/shop\n\ngo 1.19\n"),
            ("cart/cart.go", CART),
            ("invoice/invoice_test.go", NAMESAKE),
        ],
        links: &[],
        buggy: "grep -q 'tip/100' cart/cart.go",
        fix: "sed -i 's|price + tip/100|price + tip|' cart/cart.go",
        source: "cart/cart.go",
        repros: &[
            ("F1", "cart/repro_test.go::TestTotal", &total),
            ("F2", "cart/repro_pass_test.go::TestNoTip", &passing),
            (
                "F3",
                "broken/repro_test.go::TestBroken",
                "package broken\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { undefined() }\n",
            ),
            (
                "F4",
                "cart/repro_sub_test.go::TestDiscount/tip of 50 [half]",
                &subtests,
            ),
            (
                "F5",
                "cart/repro_nested_test.go::TestNested/outer/inner one",
                &nested,
            ),
            (
                "F6",
                "cart/repro_odd_test.go::TestOdd/(a|b) $1 \"q\" ünï",
                &odd,
            ),
            ("F7", "cart/repro_pass_test.go::TestNoSuchTest", ""),
        ],
    });
    f.assert_results(&[
        ("F1", "confirmed", ""),
        ("F2", "not-reproduced", ""),
        ("F3", "inconclusive", "no test ran"),
        ("F4", "confirmed", ""),
        ("F5", "confirmed", ""),
        ("F6", "confirmed", ""),
        (
            "F7",
            "inconclusive",
            "go test ran no test by that name (cart/repro_pass_test.go::TestNoSuchTest)",
        ),
    ]);
    f.assert_green(&["F1", "F4", "F5", "F6"]);
    // TEST's -vet=off kept, its -count replaced; one package, -json.
    let log = f.log("verify-1-F4.test.log");
    assert!(
        log.contains(
            r"go test -vet=off -count=1 -json -run '^TestDiscount$/^tip_of_50_\[half\]$' ./cart"
        ),
        "{log}"
    );
}
