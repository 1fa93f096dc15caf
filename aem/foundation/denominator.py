"""What a rate was computed over, and what was left out of it — said every time.

Why: "pass rate 90 %" over 10 decided items reads the same as over 10 of 100, when 90
could not be measured (no judge, a judge error, nothing to check). A rate AEM prints or
gates on therefore states its denominator as pass / fail / unverified / skipped (with the
reasons) / error, and a gate can refuse a run whose unmeasured share is too large. An
item that could not be scored is never a fail, and never silently dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Denominator:
    """The items behind one rate: decided (pass, fail) and not measured (the rest)."""

    passed: int = 0
    failed: int = 0
    unverified: int = 0
    errors: int = 0
    # Why each skipped item was skipped, with how many ("no answer", "no result of X" …).
    skipped: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        outcomes: Iterable[str],
        skip_reasons: Iterable[str] = (),
    ) -> Denominator:
        """From outcome values (``pass``, ``fail``, ``unverified``, ``error``, ``skip``) and
        the reasons of the skipped ones.

        >>> d = Denominator.of(["pass", "fail", "skip", "error"], ["no answer"])
        >>> d.describe()
        '1 of 2 passed; not measured: 1 skipped (no answer), 1 error — 50% of 4'
        """
        counts = Counter(outcomes)
        reasons = Counter(skip_reasons)
        missing = counts["skip"] - sum(reasons.values())
        if missing > 0:
            reasons["no reason given"] += missing
        return cls(
            passed=counts["pass"],
            failed=counts["fail"],
            unverified=counts["unverified"],
            errors=counts["error"],
            skipped=dict(reasons),
        )

    @property
    def decided(self) -> int:
        return self.passed + self.failed

    @property
    def unmeasured(self) -> int:
        return self.unverified + self.errors + sum(self.skipped.values())

    @property
    def total(self) -> int:
        return self.decided + self.unmeasured

    @property
    def rate(self) -> float | None:
        """The pass rate over the decided items; None when nothing was decided."""
        return self.passed / self.decided if self.decided else None

    @property
    def unmeasured_share(self) -> float | None:
        """The share of all items that could not be scored; None when there are none."""
        return self.unmeasured / self.total if self.total else None

    def describe(self) -> str:
        """``7 of 8 passed; not measured: 1 unverified, 2 skipped (no answer) — 27% of 11``."""
        head = f"{self.passed} of {self.decided} passed"
        parts = []
        if self.unverified:
            parts.append(f"{self.unverified} unverified")
        for reason, count in sorted(self.skipped.items()):
            parts.append(f"{count} skipped ({reason})")
        if self.errors:
            parts.append(f"{self.errors} error" + ("s" if self.errors != 1 else ""))
        if not parts:
            return head
        share = self.unmeasured_share or 0.0
        return f"{head}; not measured: {', '.join(parts)} — {share:.0%} of {self.total}"
