"""Text and Markdown tables, money and counts, formatted the same way in every plan section."""
from __future__ import annotations

from typing import Optional
from collections.abc import Sequence

UNKNOWN = "unknown"


def money(usd: Optional[float]) -> str:
    """Thousands separators, two decimals: 118,594.40. None (no price known) reads `unknown`."""
    return UNKNOWN if usd is None else f"{usd:,.2f}"


def rate(usd: Optional[float]) -> str:
    """A unit price with the digits the price table has (0.9776, 2.24208), at least two decimals."""
    if usd is None:
        return UNKNOWN
    text = f"{usd:,.6f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}"


def count(n: float) -> str:
    return f"{int(n):,}" if float(n).is_integer() else f"{n:,.2f}".rstrip("0")  # 1,672.92 GB, 0.5 nodes


def span(lo: float, hi: float) -> str:
    """`3` when both ends agree, else `0-4`."""
    return count(lo) if lo == hi else f"{count(lo)}-{count(hi)}"


def percent(fraction: Optional[float]) -> str:
    return "-" if fraction is None else f"{fraction * 100:.1f}%"


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = (),
               indent: str = "  ") -> list[str]:
    """Aligned columns; columns listed in `right` (numbers) are right-aligned."""
    widths = [max(len(str(r[i])) for r in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return (indent + "  ".join(parts)).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    def esc(cell: str) -> str:
        return str(cell).replace("|", "\\|")

    rule = ["--:" if i in right else "---" for i in range(len(headers))]
    return [f"| {' | '.join(esc(h) for h in headers)} |", f"|{'|'.join(rule)}|",
            *(f"| {' | '.join(esc(c) for c in r)} |" for r in rows)]
