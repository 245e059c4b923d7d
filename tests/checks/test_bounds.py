"""The bound grammar shared by the counting checks: what each spelling means, and what is refused."""

from __future__ import annotations

import pytest

from benchtape.checks.bounds import Bound, parse_bound
from benchtape.checks.registry import CheckConfigError, build
from benchtape.core.results import CheckSpec


def bound(**args):
    return parse_bound(args, "session:step-count")


@pytest.mark.parametrize(
    "args, inside, outside",
    [
        ({"lte": 3}, [0, 3], [4]),
        ({"gte": 2}, [2, 9], [1]),
        ({"gte": 1, "lte": 3}, [1, 2, 3], [0, 4]),  # both ends of a range bind
        ({"eq": 2}, [2], [1, 3]),
        ({"min": 2}, [2], [1]),  # min is gte
        ({"max": 2}, [2], [3]),  # max is lte
        ({"min": 1, "max": 2}, [1, 2], [0, 3]),
        ({"lte": 3, "max": 3}, [3], [4]),  # the same bound written twice with equal values is fine
        ({"gte": 2.5}, [3], [2]),
    ],
)
def test_each_spelling_binds(args, inside, outside):
    b = bound(**args)
    assert all(b.test(n) for n in inside)
    assert not any(b.test(n) for n in outside)


def test_aliases_read_as_canonical_names_in_evidence():
    assert bound(min=1, max=5).evidence() == {"gte": 1, "lte": 5}
    assert bound(eq=3).evidence() == {"eq": 3}


def test_no_bound_is_none_unless_required():
    assert parse_bound({}, "session:turn-count") is None
    assert parse_bound({"thread": "main"}, "session:tool-used") is None
    with pytest.raises(CheckConfigError, match=r"session:step-count: a bound is required: set args.lte .* args.gte .* args.eq"):
        parse_bound({}, "session:step-count", required=True)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"gte": 20, "lte": 5}, r"args.gte \(20\) is above args.lte \(5\), so no count fits; swap them or widen the range"),
        ({"min": 20, "max": 5}, r"args.min \(20\) is above args.max \(5\), so no count fits"),
        ({"lte": 3, "max": 5}, r"args.lte \(3\) and args.max \(5\) are the same bound written twice with different values; keep only one"),
        ({"gte": 1, "min": 2}, r"args.gte \(1\) and args.min \(2\) are the same bound written twice"),
        ({"eq": 5, "lte": 3}, r"args.eq is an exact count and cannot be combined with args.lte; write eq alone, or gte/lte for a range"),
        ({"eq": 5, "min": 3}, r"cannot be combined with args.min"),
        ({"lte": "five"}, r"args.lte must be a number, got 'five' \(str\); write e.g. lte: 5"),
        ({"gte": True}, r"args.gte must be a number, got true \(bool\)"),
        ({"eq": None}, r"args.eq must be a number, got None"),
        ({"lte": [3]}, r"args.lte must be a number"),
        ({"gte": -1}, r"args.gte must not be negative"),
    ],
)
def test_refused_with_what_and_fix(args, message):
    with pytest.raises(CheckConfigError, match=message):
        bound(**args)


def test_refusals_surface_through_build_of_every_counting_check():
    for check_type in ("session:step-count", "session:turn-count", "session:turn-step-count", "session:tool-used"):
        spec = CheckSpec(type=check_type, value="Read" if check_type.endswith("tool-used") else None, args={"gte": 20, "lte": 5})
        with pytest.raises(CheckConfigError, match=f"^{check_type}: args.gte"):
            build(spec)


def test_violation_names_the_end_that_broke():
    b = Bound(gte=2, lte=4)
    assert b.violation(1) == "1 is below the floor of 2"
    assert b.violation(5) == "5 is above the ceiling of 4"
    assert b.violation(3) is None
    assert Bound(eq=2).violation(3) == "3 is not exactly 2"
    assert Bound(eq=2).floor == Bound(eq=2).ceiling == 2
    assert b.describe() == "between 2 and 4"
