"""tests/pants holds two kinds of tests:

* `*_test.py`: RuleRunner tests of the plugin. They import Pants (Python 3.9,
  the `pants-plugins` resolve) and run with `./pants test tests/pants::`.
* `test_*.py`: integration tests that run the real `./pants`, collected by
  the main suite (`./run-tests`, Python 3.11); one of them runs the
  RuleRunner tests through `./pants test`.
"""

try:
    import pants.testutil  # noqa: F401
except ImportError:
    collect_ignore_glob = ["*_test.py"]


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "slow: runs the real ./pants (minutes); deselect with -m 'not slow'")
