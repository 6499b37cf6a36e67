"""The project's synthetic movie reviews: seeded, balanced, distinct, with the hard cases."""

from seqlab.data import synthetic_reviews as reviews


def test_the_same_seed_gives_the_same_reviews_and_another_seed_others():
    first = reviews.generate_reviews(50, seed=3)
    assert first == reviews.generate_reviews(50, seed=3)
    assert first != reviews.generate_reviews(50, seed=4)


def test_reviews_are_balanced_and_distinct():
    generated = reviews.generate_reviews(200, seed=1)
    assert sum(r.label for r in generated) == 100
    assert len({r.text for r in generated}) == 200
    assert {r.label for r in generated} == {0, 1}


def test_reviews_carry_the_hard_cases():
    texts = [r.text for r in reviews.generate_reviews(300, seed=2)]
    assert any(" not " in t or " never " in t or " hardly " in t for t in texts)  # negation
    assert any(", but " in t or t.startswith("Although") or ". Although" in t for t in texts)
    lengths = [len(t.split()) for t in texts]
    assert min(lengths) < 10 and max(lengths) > 50
