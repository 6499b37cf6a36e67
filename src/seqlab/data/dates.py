"""A synthetic translation task whose alignment you can see: human-readable dates -> ISO dates.

``"Tuesday, 3 March 2021" -> "2021-03-03"``: the attention heatmap is a permuted diagonal.
"""

from __future__ import annotations

import datetime
import random

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]

#: The surface formats, with an example each (all of 3 March 2021).
DATE_FORMATS = {
    "weekday_day_month_year": "Wednesday, 3 March 2021",
    "day_month_year": "3 March 2021",
    "month_day_year": "March 3, 2021",
    "short_month_day_year": "Mar 3 2021",
    "ordinal_of_month_year": "the 3rd of March, 2021",
    "weekday_month_ordinal": "Wednesday, March 3rd, 2021",
    "dotted": "3.3.2021",
    "year_month_day": "2021 March 3",
}


def ordinal(day: int) -> str:
    """``1 -> "1st"``, ``2 -> "2nd"``, ``11 -> "11th"``, ``23 -> "23rd"``."""
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def format_date(date: datetime.date, style: str) -> str:
    """Write ``date`` in one of the :data:`DATE_FORMATS` styles."""
    weekday = WEEKDAYS[date.weekday()]
    month = MONTHS[date.month - 1]
    day, year = date.day, date.year
    writers = {
        "weekday_day_month_year": lambda: f"{weekday}, {day} {month} {year}",
        "day_month_year": lambda: f"{day} {month} {year}",
        "month_day_year": lambda: f"{month} {day}, {year}",
        "short_month_day_year": lambda: f"{month[:3]} {day} {year}",
        "ordinal_of_month_year": lambda: f"the {ordinal(day)} of {month}, {year}",
        "weekday_month_ordinal": lambda: f"{weekday}, {month} {ordinal(day)}, {year}",
        "dotted": lambda: f"{day}.{date.month}.{year}",
        "year_month_day": lambda: f"{year} {month} {day}",
    }
    if style not in writers:
        raise ValueError(f"Unknown date style {style!r}; choose from {sorted(writers)}")
    return writers[style]()


def generate_date_pairs(count: int, seed: int = 42) -> list[tuple[str, str]]:
    """``count`` (human-readable date, ISO date) pairs, reproducible from ``seed``: dates from
    1970 to 2039, each in a style drawn from :data:`DATE_FORMATS`."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    styles = list(DATE_FORMATS)
    rng = random.Random(seed)
    start = datetime.date(1970, 1, 1).toordinal()
    end = datetime.date(2039, 12, 31).toordinal()
    pairs = []
    for _ in range(count):
        date = datetime.date.fromordinal(rng.randint(start, end))
        pairs.append((format_date(date, rng.choice(styles)), date.isoformat()))
    return pairs
