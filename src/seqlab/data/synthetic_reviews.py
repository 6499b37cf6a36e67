"""A seeded generator of short movie reviews for FAST mode (nothing here comes from IMDB).

Negation, mixed opinions and filler keep a bag-of-words model well short of 100%; each label is
the sign of its sentences' scores. ``python -m seqlab_instructor.imdb_sample`` writes
``data/imdb_sample/`` from it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

POSITIVE_ADJECTIVES = [
    "great", "wonderful", "brilliant", "superb", "moving", "charming", "gripping",
    "delightful", "clever", "beautiful", "memorable", "stunning", "excellent", "touching",
    "funny", "fresh", "engaging", "heartfelt", "thrilling", "elegant", "witty", "powerful",
    "inventive", "gorgeous", "lovely", "sharp", "warm", "magical", "good", "solid",
]
NEGATIVE_ADJECTIVES = [
    "dull", "boring", "tedious", "clumsy", "awful", "terrible", "bland", "forgettable",
    "predictable", "messy", "lifeless", "painful", "weak", "silly", "shallow", "endless",
    "confusing", "flat", "lazy", "muddled", "cheap", "stiff", "hollow", "sluggish", "bad",
    "grating", "tiresome", "pointless", "poor", "ugly",
]
ASPECTS = [
    "acting", "plot", "script", "soundtrack", "camera work", "dialogue", "pacing", "ending",
    "cast", "direction", "story", "score", "editing", "lead performance", "humour",
    "production design", "costumes", "final act", "opening scene", "villain",
    "supporting cast", "screenplay", "lighting", "special effects", "characters",
]
PLURAL_ASPECTS = {"characters", "costumes", "special effects"}
STRONG = ["really", "truly", "incredibly", "absolutely", "utterly", "remarkably", "so"]
WEAK = ["somewhat", "fairly", "rather", "slightly", "mildly"]

TITLES = [
    "The Glass Orchard", "Night Ferry", "Salt and Copper", "The Last Tram to Vell",
    "Paper Lanterns", "Harbour of Small Hours", "The Quiet Cartographer", "Ninefold",
    "A Winter in Orsk", "Under the Blue Viaduct", "The Tin Astronomer", "Marrow Street",
    "Seven Bridges Down", "The Lantern Keeper", "Emberfall", "Tidewater Hotel",
]
PROTAGONISTS = [
    "a retired lighthouse keeper", "a young pastry chef", "a stubborn detective",
    "a travelling violinist", "a widowed farmer", "a teenage chess prodigy", "an exiled prince",
    "a night-shift nurse", "a failing magician", "a forgetful inventor", "a shy cartoonist",
]
PLOT_EVENTS = [
    "tries to win back a lost fortune", "returns to a home town full of secrets",
    "takes a job on a cargo ship", "searches for a missing brother",
    "enters a baking contest", "inherits a crumbling theatre", "plans one last heist",
    "crosses the desert on foot", "falls for a rival", "hides a stolen painting",
]
NEUTRAL_SENTENCES = [
    "I saw it at a late showing with friends.", "It runs a little over two hours.",
    "I watched it on a rainy Sunday afternoon.", "My sister picked this one.",
    "It is based on a novel I have not read.", "The film was shot on location in the north.",
    "I went in knowing nothing about it.", "The cinema was half empty.",
    "It is the director's third feature.", "I watched it twice for this review.",
    "Most of it takes place over a single night.", "There is a short scene after the credits.",
]
POSITIVE_VERDICTS = [
    "I would happily watch it again.", "Highly recommended.", "A must see.",
    "Go and see it on the big screen.", "One of the best films I have seen this year.",
    "I left the cinema smiling.", "Worth every minute.", "I will be recommending it to everyone.",
]
NEGATIVE_VERDICTS = [
    "Save your money.", "I want those two hours back.", "Skip it.",
    "I nearly walked out halfway through.", "One of the worst films I have seen this year.",
    "I would not recommend it to anyone.", "A waste of a good evening.",
    "I checked my watch more than once.",
]
# Reviews sometimes end with a score; both classes use the middle of the range.
SCORE_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


@dataclass(frozen=True)
class Review:
    text: str
    label: int  # 1 = positive, 0 = negative (as TFDS imdb_reviews)


def _is(aspect: str) -> str:
    return "are" if aspect in PLURAL_ASPECTS else "is"


def _adjective(rng: random.Random, sign: int) -> str:
    return rng.choice(POSITIVE_ADJECTIVES if sign > 0 else NEGATIVE_ADJECTIVES)


def _intensity(rng: random.Random) -> tuple[str, float]:
    """An optional intensifier and the weight it gives the adjective after it."""
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(STRONG) + " ", 1.5
    if roll < 0.5:
        return rng.choice(WEAK) + " ", 0.5
    return "", 1.0


def _noun_phrase(adjectives: str, aspect: str) -> str:
    """'a dull plot', 'an endless script', 'clumsy special effects'."""
    phrase = f"{adjectives} {aspect}"
    if aspect in PLURAL_ASPECTS:
        return phrase
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def _capitalize(sentence: str) -> str:
    return sentence[0].upper() + sentence[1:]


def _aspect_sentence(rng: random.Random, sign: int) -> tuple[str, float]:
    """One opinion about one aspect; returns (sentence, score)."""
    aspect = rng.choice(ASPECTS)
    kind = rng.random()
    if kind < 0.22:
        # Negation: the adjective has the opposite sign of the opinion. Negating a negative
        # word ("not bad") is milder than praising outright.
        adjective = _adjective(rng, -sign)
        negator = rng.choice(["not", "never", "hardly", "far from", "not at all"])
        if negator == "not at all":
            sentence = f"The {aspect} {_is(aspect)} not {adjective} at all."
        else:
            sentence = f"The {aspect} {_is(aspect)} {negator} {adjective}."
        return sentence, sign * (0.6 if sign > 0 else 1.0)
    intensifier, weight = _intensity(rng)
    adjective = _adjective(rng, sign)
    if kind < 0.6:
        sentence = f"The {aspect} {_is(aspect)} {intensifier}{adjective}."
    elif kind < 0.75:
        sentence = f"The {aspect}? {_capitalize(intensifier + adjective)}."
    elif kind < 0.88:
        sentence = f"I found the {aspect} {intensifier}{adjective}."
    else:
        was = "were" if aspect in PLURAL_ASPECTS else "was"
        opener = rng.choice(["I thought the", "To me the", "Honestly, the"])
        sentence = f"{opener} {aspect} {was} {intensifier}{adjective}."
    return sentence, sign * weight


def _contrast_sentence(rng: random.Random, sign: int) -> tuple[str, float]:
    """'Good X, but bad Y': the clause after the conjunction carries the opinion."""
    first, second = rng.sample(ASPECTS, 2)
    first_adjective = _adjective(rng, -sign)
    second_adjectives = rng.sample(POSITIVE_ADJECTIVES if sign > 0 else NEGATIVE_ADJECTIVES, 2)
    pattern = rng.randrange(3)
    if pattern == 0:
        both = f"{second_adjectives[0]}, {second_adjectives[1]}"
        sentence = (f"{_capitalize(_noun_phrase(first_adjective, first))}, but "
                    f"{_noun_phrase(both, second)}.")
    elif pattern == 1:
        sentence = (f"The {first} {_is(first)} {first_adjective}, but the {second} "
                    f"{_is(second)} {second_adjectives[0]}.")
    else:
        sentence = (f"Although the {first} {_is(first)} {first_adjective}, the {second} "
                    f"{_is(second)} {second_adjectives[0]} and {second_adjectives[1]}.")
    return sentence, 1.2 * sign


def _verdict(rng: random.Random, sign: int) -> tuple[str, float]:
    return rng.choice(POSITIVE_VERDICTS if sign > 0 else NEGATIVE_VERDICTS), 1.5 * sign


def _score_sentence(rng: random.Random, sign: int) -> tuple[str, float]:
    value = rng.randint(6, 10) if sign > 0 else rng.randint(1, 5)
    template = rng.choice(["{} out of ten.", "I give it {} out of ten.", "{} stars out of ten."])
    return _capitalize(template.format(SCORE_WORDS[value - 1])), 1.0 * sign


def _premise(rng: random.Random) -> str:
    title = rng.choice(TITLES)
    template = rng.choice(["{title} follows {who} who {what}.", "In {title}, {who} {what}.",
                           "{title} is about {who} who {what}."])
    return template.format(title=title, who=rng.choice(PROTAGONISTS), what=rng.choice(PLOT_EVENTS))


def generate_review(rng: random.Random, label: int) -> Review:
    """One review whose sentences add up to the sign of ``label`` (1 positive, 0 negative)."""
    sign = 1 if label == 1 else -1
    while True:
        opinions: list[tuple[str, float]] = []
        for _ in range(rng.randint(1, 5)):
            # About one opinion in five leans the other way: mixed reviews.
            stance = sign if rng.random() < 0.8 else -sign
            maker = rng.choices([_aspect_sentence, _contrast_sentence], weights=[4, 1])[0]
            opinions.append(maker(rng, stance))
        if rng.random() < 0.45:
            opinions.append(_verdict(rng, sign if rng.random() < 0.9 else -sign))
        if rng.random() < 0.2:
            opinions.append(_score_sentence(rng, sign))
        score = sum(value for _, value in opinions)
        if score * sign > 0.25:
            break
    sentences = [text for text, _ in opinions]
    rng.shuffle(sentences)
    if rng.random() < 0.6:
        sentences.insert(0, _premise(rng))
    for filler in rng.sample(NEUTRAL_SENTENCES, rng.choice([0, 0, 1, 1, 2])):
        sentences.insert(rng.randrange(len(sentences) + 1), filler)
    return Review(" ".join(sentences), label)


def generate_reviews(count: int, seed: int) -> list[Review]:
    """``count`` distinct reviews, alternating positive and negative (so balanced), seeded."""
    rng = random.Random(seed)
    seen: set[str] = set()
    reviews: list[Review] = []
    while len(reviews) < count:
        review = generate_review(rng, label=int(len(reviews) % 2 == 0))
        if review.text not in seen:
            seen.add(review.text)
            reviews.append(review)
    rng.shuffle(reviews)
    return reviews
