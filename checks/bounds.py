"""The one bound grammar the counting checks share (`step-count`, `turn-count`,
`turn-step-count`, and `tool-used`'s per-tool counts).

A bound with no single reading is refused when the check is built, before anything is
billed: a range no count fits, one bound written twice with different values, an exact
count crossed with a range, or a bound that is not a number. The checks then only ask
`bound.test(n)`, so every counting check agrees on what `{gte: 1, lte: 20}` means.

    args: {lte: N}          a ceiling
    args: {gte: N}          a floor
    args: {gte: A, lte: B}  a closed range: both ends bind
    args: {eq: N}           an exact count
    min / max               accepted spellings of gte / lte
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from benchtape.checks.registry import CheckConfigError

# Every spelling a bound may be written in, mapped to the bound it means.
SPELLINGS: dict[str, str] = {"gte": "gte", "min": "gte", "lte": "lte", "max": "lte", "eq": "eq"}
BOUND_KEYS = frozenset(SPELLINGS)


@dataclass(frozen=True)
class Bound:
    """A parsed bound; `None` on an end means that end is open."""

    gte: float | None = None
    lte: float | None = None
    eq: float | None = None

    @property
    def floor(self) -> float | None:
        """The least count that passes, from `gte` or `eq`."""
        return self.eq if self.eq is not None else self.gte

    @property
    def ceiling(self) -> float | None:
        """The greatest count that passes, from `lte` or `eq`."""
        return self.eq if self.eq is not None else self.lte

    def test(self, n: float) -> bool:
        return self.violation(n) is None

    def violation(self, n: float) -> str | None:
        """Why `n` falls outside the bound, or None when it fits."""
        if self.eq is not None:
            return None if n == self.eq else f"{_num(n)} is not exactly {_num(self.eq)}"
        if self.gte is not None and n < self.gte:
            return f"{_num(n)} is below the floor of {_num(self.gte)}"
        if self.lte is not None and n > self.lte:
            return f"{_num(n)} is above the ceiling of {_num(self.lte)}"
        return None

    def floor_violation(self, n: float) -> str | None:
        floor = self.floor
        return f"{_num(n)} is below the floor of {_num(floor)}" if floor is not None and n < floor else None

    def ceiling_violation(self, n: float) -> str | None:
        ceiling = self.ceiling
        return f"{_num(n)} is above the ceiling of {_num(ceiling)}" if ceiling is not None and n > ceiling else None

    def describe(self) -> str:
        if self.eq is not None:
            return f"exactly {_num(self.eq)}"
        if self.gte is not None and self.lte is not None:
            return f"between {_num(self.gte)} and {_num(self.lte)}"
        if self.gte is not None:
            return f"at least {_num(self.gte)}"
        if self.lte is not None:
            return f"at most {_num(self.lte)}"
        return "any count"

    def evidence(self) -> dict[str, float]:
        """The declared ends only, under their canonical names (absent means not declared)."""
        return {k: _plain(v) for k, v in (("gte", self.gte), ("lte", self.lte), ("eq", self.eq)) if v is not None}


def parse_bound(args: Mapping[str, Any] | None, check_type: str, *, required: bool = False) -> Bound | None:
    """Read the bound out of a check's `args`; None when none was written (and none is required).

    Raises CheckConfigError naming what is wrong and how to write it instead.
    """
    args = args or {}
    if not isinstance(args, Mapping):
        raise CheckConfigError(f"{check_type}: args must be a map, got {type(args).__name__}; write e.g. args: {{lte: 20}}")
    written: dict[str, tuple[str, float]] = {}  # canonical -> (spelling, value)
    for spelling in ("gte", "min", "lte", "max", "eq"):
        if spelling not in args:
            continue
        value = _number(args[spelling], spelling, check_type)
        canon = SPELLINGS[spelling]
        if canon in written:
            first, before = written[canon]
            if before != value:
                raise CheckConfigError(
                    f"{check_type}: args.{first} ({_num(before)}) and args.{spelling} ({_num(value)}) are the same bound "
                    f"written twice with different values; keep only one of them"
                )
            continue
        written[canon] = (spelling, value)

    if not written:
        if required:
            raise CheckConfigError(
                f"{check_type}: a bound is required: set args.lte (a ceiling), args.gte (a floor) or args.eq (an exact count), "
                f"e.g. args: {{lte: 20}}"
            )
        return None
    if "eq" in written and len(written) > 1:
        other = next(s for c, (s, _) in written.items() if c != "eq")
        raise CheckConfigError(
            f"{check_type}: args.eq is an exact count and cannot be combined with args.{other}; "
            f"write eq alone, or gte/lte for a range"
        )
    bound = Bound(**{c: v for c, (_, v) in written.items()})
    if bound.gte is not None and bound.lte is not None and bound.gte > bound.lte:
        lo, hi = written["gte"][0], written["lte"][0]
        raise CheckConfigError(
            f"{check_type}: args.{lo} ({_num(bound.gte)}) is above args.{hi} ({_num(bound.lte)}), so no count fits; "
            f"swap them or widen the range"
        )
    return bound


def _number(value: Any, spelling: str, check_type: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
        shown = "true" if value is True else "false" if value is False else repr(value)
        raise CheckConfigError(
            f"{check_type}: args.{spelling} must be a number, got {shown} ({type(value).__name__}); write e.g. {spelling}: 5"
        )
    if value < 0:
        raise CheckConfigError(f"{check_type}: args.{spelling} must not be negative (a count never is), got {_num(value)}")
    return value


def _plain(v: float) -> float:
    return int(v) if isinstance(v, float) and v.is_integer() else v


def _num(v: float | None) -> str:
    if v is None:
        return "none"
    return str(_plain(v))
