//! pytest: nested classes, a namesake in another folder, parametrized ids
//! with spaces, brackets, quotes and `$`, parametrizations that disagree, a
//! module that does not import.

use crate::case::{Case, run, runners};
use crate::support::assert_has;

const SHOP: &str = "def total_cents(price, tip):\n    return price + tip // 100\n";

const NAMESAKE: &str = "from shop import total_cents\n\n\ndef test_keeps_the_tip():\n    assert total_cents(100, 50) == 150\n";

#[test]
#[cfg_attr(
    not(any(loopwatch_ci, loopwatch_runner_pytest)),
    ignore = "needs pytest in tests/fixtures/checks/runners/python (.ci/run: pip install --target): runs when CI is set"
)]
fn pytest_verdicts_follow_its_junit_report() {
    let python = runners().join("python");
    let test = format!(
        "PYTHONPATH={} python3 -m pytest -q -p no:randomly",
        python.display()
    );
    let f = run(&Case {
        test: &test,
        files: &[
            ("shop.py", SHOP),
            ("tests/__init__.py", ""),
            ("tests/sub/__init__.py", ""),
            ("tests/sub/test_total.py", NAMESAKE),
            (".gitignore", "__pycache__/\n"),
        ],
        links: &[],
        buggy: "grep -q 'tip // 100' shop.py",
        fix: "sed -i 's|tip // 100|tip|' shop.py",
        source: "shop.py",
        repros: &[
            (
                "F1",
                "tests/test_repro.py::TestTotal::TestNested::test_keeps_the_tip",
                "from shop import total_cents\n\n\nclass TestTotal:\n    class TestNested:\n        def test_keeps_the_tip(self):\n            assert total_cents(100, 50) == 150\n",
            ),
            (
                "F2",
                "tests/test_repro_pass.py::test_keeps_the_tip",
                "from shop import total_cents\n\n\ndef test_keeps_the_tip():\n    assert total_cents(100, 0) == 100\n",
            ),
            (
                "F3",
                "tests/test_repro_broken.py::test_x",
                "import no_such_module\n\n\ndef test_x():\n    pass\n",
            ),
            (
                "F4",
                "tests/test_repro_param.py::test_tip[tip of 50 [half]]",
                "import pytest\n\nfrom shop import total_cents\n\n\n@pytest.mark.parametrize(\"tip, want\", [(50, 150)], ids=[\"tip of 50 [half]\"])\ndef test_tip(tip, want):\n    assert total_cents(100, tip) == want\n",
            ),
            (
                "F5",
                "tests/test_repro_mixed.py::test_mixed",
                "import pytest\n\nfrom shop import total_cents\n\n\n@pytest.mark.parametrize(\"tip\", [0, 50])\ndef test_mixed(tip):\n    assert total_cents(100, tip) == 100 + tip\n",
            ),
            (
                "F6",
                "tests/test_repro_odd.py::test_odd[$1 \"q\" 'r' (a|b) *]",
                "import pytest\n\nfrom shop import total_cents\n\n\n@pytest.mark.parametrize(\"tip\", [50], ids=['$1 \"q\" \\'r\\' (a|b) *'])\ndef test_odd(tip):\n    assert total_cents(100, tip) == 150\n",
            ),
            ("F7", "tests/test_repro_pass.py::test_no_such_test", ""),
            // pytest escapes a non-ASCII id (`\\xfcn\\xef`): the name as written is none of its tests.
            (
                "F8",
                "tests/test_repro_uni.py::test_uni[ünï]",
                "import pytest\n\nfrom shop import total_cents\n\n\n@pytest.mark.parametrize(\"tip\", [50], ids=['ünï'])\ndef test_uni(tip):\n    assert total_cents(100, tip) == 150\n",
            ),
        ],
    });
    f.assert_results(&[
        ("F1", "confirmed", ""),
        ("F2", "not-reproduced", ""),
        ("F3", "inconclusive", "no test ran: tests.test_repro_broken could not be collected"),
        ("F4", "confirmed", ""),
        ("F5", "inconclusive", "disagree: tests/test_repro_mixed.py::test_mixed[0] (passed), tests/test_repro_mixed.py::test_mixed[50] (failed)"),
        ("F6", "confirmed", ""),
        ("F7", "inconclusive", "pytest ran no test by that name (tests/test_repro_pass.py::test_no_such_test)"),
        ("F8", "inconclusive", "pytest ran no test by that name (tests/test_repro_uni.py::test_uni[ünï])"),
    ]);
    f.assert_green(&["F1", "F4", "F6"]);
    // TEST's own options were kept; loopwatch's report beside the log.
    let log = f.log("verify-1-F1.test.log");
    assert_has(
        &log,
        "-q -p no:randomly -p no:cacheprovider -o junit_family=xunit1 --junitxml=",
    );
    assert!(
        f.project
            .pipeline()
            .join("verify-1-F1.report.xml")
            .is_file()
    );
}
