"""seqlab.data.dates: the synthetic human date -> ISO date task."""

from __future__ import annotations

import datetime

import pytest

from seqlab.data import load_translation
from seqlab.data.dates import (
    DATE_FORMATS,
    MONTHS,
    WEEKDAYS,
    format_date,
    generate_date_pairs,
    ordinal,
)


@pytest.mark.parametrize("day, expected", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"),
                                           (11, "11th"), (12, "12th"), (13, "13th"),
                                           (21, "21st"), (22, "22nd"), (23, "23rd"), (31, "31st")])
def test_ordinal(day, expected):
    assert ordinal(day) == expected


@pytest.mark.parametrize("style, example", sorted(DATE_FORMATS.items()))
def test_every_style_writes_its_documented_example(style, example):
    assert format_date(datetime.date(2021, 3, 3), style) == example


def test_unknown_style_is_refused():
    with pytest.raises(ValueError, match="Unknown date style"):
        format_date(datetime.date(2021, 3, 3), "roman")


def test_pairs_are_reproducible_and_correct():
    pairs = generate_date_pairs(500, seed=3)
    assert pairs == generate_date_pairs(500, seed=3)
    assert pairs != generate_date_pairs(500, seed=4)
    for human, iso in pairs:
        date = datetime.date.fromisoformat(iso)
        assert 1970 <= date.year <= 2039
        assert str(date.year) in human
        words = human.replace(",", "").split()
        if any(w in WEEKDAYS for w in words):
            assert WEEKDAYS[date.weekday()] in words
        if "." not in human:
            assert MONTHS[date.month - 1] in human or MONTHS[date.month - 1][:3] in words
    assert len({human for human, _ in pairs}) > 450
    styles_seen = {next(s for s in DATE_FORMATS if format_date(datetime.date.fromisoformat(iso), s) == h)
                   for h, iso in pairs}
    assert styles_seen == set(DATE_FORMATS)


def test_a_negative_count_is_refused():
    with pytest.raises(ValueError):
        generate_date_pairs(-1)


def test_load_translation_dates_has_small_vocabularies_and_iso_targets():
    data = load_translation("dates", num_examples=1000, max_length=12)
    assert (len(data.train_pairs), len(data.test_pairs)) == (800, 100)
    assert data.direction == "date-iso"
    assert data.target_vocab_size < 120 and data.source_vocab_size < 200
    assert all(len(iso) == 10 and iso[4] == iso[7] == "-" for _, iso in data.test_pairs)
