"""scripts/test.sh's header lists its suites as they are: the names in its header, in order,
equal the names of its `suite` calls (issue #40 item 7)."""
import re
from pathlib import Path

TEST_SH = Path(__file__).resolve().parents[2] / "scripts" / "test.sh"


def header_suites(text: str) -> list:
    lines = text.split("\n")
    start = next(i for i, ln in enumerate(lines) if "checks this list against" in ln) + 1
    names = []
    for ln in lines[start:]:
        if not ln.startswith("#   "):
            break
        m = re.match(r"#   (\S(?:.*?\S)?)\s{2,}\S", ln)
        if m:  # a continuation line starts with spaces, not a name
            names.append(m.group(1))
    return names


def suite_calls(text: str) -> list:
    return re.findall(r'^\s*suite "([^"]+)"', text, re.M)


def test_the_header_lists_the_suites_in_order():
    text = TEST_SH.read_text()
    assert header_suites(text) == suite_calls(text)


def test_a_suite_missing_from_the_header_is_seen():
    text = TEST_SH.read_text() + '\nsuite "new suite" true\n'
    assert header_suites(text) != suite_calls(text)
