"""Checks for notebook 08's exercises: BERT's 80/10/10 masking rule and the shares it gives,
the masked-LM loss ``Σ w·CE / Σ w``, and two classifiers on a frozen BERT backbone."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from seqlab.course.checks.core import (
    CheckFailed,
    assert_close,
    check_entries,
    log_softmax,
    one_number,
    passed,
    refuse_package_calls,
    require,
    run_student_code,
    value_of,
)
from seqlab.course.checks.transcript import observe

MASKING = "Exercise 1: the 80/10/10 masking rule"
LOSS = "Exercise 2: the loss on masked positions only"
PROBE = "Exercise 3: freeze the encoder"
#: The two frozen classifiers Exercise 3 compares.
PROBE_NAMES = ("MLM-pretrained, frozen", "random weights, frozen")
#: BERT's split of the chosen positions: [MASK] below 0.8, a random token below 0.9, else kept.
MASK_SHARE = 0.8
RANDOM_SHARE = 0.1


def apply_masking_reference(token_ids, chosen, draws, random_ids, mask_id):
    """What exercise 1 asks for (NumPy)."""
    token_ids = np.asarray(token_ids)
    chosen = np.asarray(chosen, bool)
    draws = np.asarray(draws, "float64")
    masked = chosen & (draws < MASK_SHARE)
    randomised = chosen & (draws >= MASK_SHARE) & (draws < MASK_SHARE + RANDOM_SHARE)
    result = np.where(masked, mask_id, token_ids)
    return np.where(randomised, np.asarray(random_ids), result)


def _masking_case(seed, length=400, mask_id=4, vocabulary_size=50):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, vocabulary_size, length)
    chosen = rng.random(length) < 0.15
    chosen[:3] = True                       # make sure each branch is exercised
    draws = rng.random(length)
    draws[:3] = [0.1, 0.85, 0.95]
    random_ids = rng.integers(5, vocabulary_size, length)
    random_ids[1] = (token_ids[1] + 1 - 5) % (vocabulary_size - 5) + 5  # differs from the token
    return token_ids, chosen, draws, random_ids, mask_id


def predict_shares_reference(vocabulary_size):
    """What exercise 1 asks to predict: the fate of a chosen token, the random token drawn from
    all ``vocabulary_size`` ids."""
    return {"[MASK]": MASK_SHARE + RANDOM_SHARE / vocabulary_size,
            "another token": RANDOM_SHARE * (1 - 2 / vocabulary_size),
            "unchanged": 1 - MASK_SHARE - RANDOM_SHARE + RANDOM_SHARE / vocabulary_size}


#: What becomes of a chosen token, the keys of ``predict_shares``'s answer.
SHARE_NAMES = ("[MASK]", "another token", "unchanged")
#: The vocabularies the prediction is measured at, and the tokens masked for each.
SHARE_VOCABULARIES = (8, 20, 500)
SHARE_TOKENS = 200_000


def measure_shares(apply_masking, vocabulary_size, seed=0, tokens=SHARE_TOKENS):
    """The shares of chosen tokens turned into ``[MASK]`` (id 4), another token, or left as they
    were; and the count of chosen tokens."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, vocabulary_size, tokens)      # ordinary tokens: ids 5 and up
    chosen = rng.random(tokens) < 0.15
    random_ids = rng.integers(0, vocabulary_size, tokens)     # any id, [MASK] (4) included
    after = np.asarray(apply_masking(token_ids, chosen, rng.random(tokens), random_ids, 4))[chosen]
    before = token_ids[chosen]
    return ({"[MASK]": float(np.mean(after == 4)),
             "another token": float(np.mean((after != 4) & (after != before))),
             "unchanged": float(np.mean(after == before))}, int(chosen.sum()))


def _check_prediction(apply_masking, predict_shares) -> None:
    rows = []
    for size in SHARE_VOCABULARIES:
        value = run_student_code(MASKING, predict_shares, size)
        require(MASKING, isinstance(value, Mapping) and set(value) == set(SHARE_NAMES),
                f"predict_shares({size}) must return a dict with the keys {list(SHARE_NAMES)}; "
                f"got {value!r}.")
        measured, chosen = measure_shares(apply_masking, size)
        for name in measured:
            got = one_number(MASKING, value[name], f"your {name!r} share")
            noise = np.sqrt(measured[name] * (1 - measured[name]) / chosen)
            rows.append((size, name, got, measured[name], noise))
    print(f"{'V':>5}  {'share of chosen tokens':<24}{'predicted':>10}{'measured':>10}  (± 1 s.e.)")
    for size, name, got, measured, noise in rows:
        print(f"{size:>5}  {name:<24}{got:>10.4f}{measured:>10.4f}  (± {noise:.4f})")
    for size, name, got, measured, noise in rows:
        require(MASKING, abs(got - measured) <= 4 * noise + 1e-3, f"at V = {size} you predicted "
                f"{got:.4f} for {name!r}, and your apply_masking gave {measured:.4f} ± "
                f"{noise:.4f}. Which ids can a uniform draw from all V ids give, and what does "
                "each do to the chosen token?")


def check_masking_rule(apply_masking, predict_shares) -> None:
    """Check ``apply_masking`` on random cases, then ``predict_shares(V)`` against its shares."""
    refuse_package_calls(MASKING, apply_masking, ("apply_masking_reference",))
    refuse_package_calls(MASKING, predict_shares, ("predict_shares_reference",))
    for seed in (0, 1, 2):
        token_ids, chosen, draws, random_ids, mask_id = _masking_case(seed)
        got = np.asarray(run_student_code(MASKING, apply_masking, token_ids.copy(), chosen.copy(),
                                          draws.copy(), random_ids.copy(), mask_id))
        expected = apply_masking_reference(token_ids, chosen, draws, random_ids, mask_id)
        require(MASKING, got.shape == expected.shape, f"the result has shape {got.shape}; "
                f"expected {expected.shape}: one id per input token.")
        for i in np.flatnonzero(~chosen & (got != token_ids)):  # the first one raises
            raise CheckFailed(MASKING, f"position {i} was not chosen but changed from "
                              f"{token_ids[i]} to {got[i]}: only chosen positions may change.")
        require(MASKING, not np.array_equal(got, np.where(chosen, mask_id, token_ids)),
                "every chosen position became the mask id; only those with a draw below 0.8 "
                "should (10 % get a random token, 10 % stay).")
        for i in np.flatnonzero(got != expected):  # the first one raises
            if draws[i] < MASK_SHARE:
                should = f"the mask id {mask_id} (draw {draws[i]:.2f} < 0.8)"
            elif draws[i] < MASK_SHARE + RANDOM_SHARE:
                should = f"its random id {random_ids[i]} (0.8 <= draw {draws[i]:.2f} < 0.9)"
            else:
                should = f"unchanged, {token_ids[i]} (draw {draws[i]:.2f} >= 0.9)"
            raise CheckFailed(MASKING, f"chosen position {i} holds {got[i]}; it should be "
                                       f"{should}.")
    _check_prediction(apply_masking, predict_shares)
    passed(MASKING, "your rule and your prediction agree with the measurement: a random draw "
                    "from all V ids can give [MASK] or the token itself, 1/V of the time each.")


def masked_lm_loss_reference(logits, labels, weights) -> float:
    """What exercise 2 asks for (NumPy, float64)."""
    log_probabilities = log_softmax(logits)                                      # (B, P, V)
    labels = np.asarray(labels).astype(int)
    picked = np.take_along_axis(log_probabilities, labels[..., None], -1)[..., 0]  # (B, P)
    weights = np.asarray(weights, "float64")
    return float(-(picked * weights).sum() / weights.sum())


def _loss_case(seed, batch=3, slots=5, vocabulary_size=11):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(batch, slots, vocabulary_size))
    labels = rng.integers(0, vocabulary_size, (batch, slots))
    weights = np.zeros((batch, slots))
    for row, real in enumerate(rng.integers(1, slots, batch)):
        weights[row, :real] = 1.0
    labels[weights == 0] = 0                   # unused slots hold id 0, as keras-hub's do
    return logits, labels, weights


def _measure_real_batch(masked_lm_loss, masked_lm, preprocessor, reviews) -> dict:
    """Mask ``reviews`` as pre-training does; the student's loss, the reference and Keras's."""
    import keras

    x, labels, weights = preprocessor([str(review) for review in reviews])
    logits = np.asarray(masked_lm(x, training=False), "float32")          # (B, P, V)
    labels, weights = np.asarray(labels), np.asarray(weights, "float32")  # (B, P) each
    # What BertMaskedLM.compile(loss="auto") builds; fit logs its value for each batch.
    logged = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
        labels, logits, sample_weight=weights)
    yours = run_student_code(LOSS, masked_lm_loss, logits, labels, weights)
    return {"yours": one_number(LOSS, yours, "masked_lm_loss"),
            "reference": masked_lm_loss_reference(logits, labels, weights),
            "logged": float(logged), "sequences": int(weights.shape[0]),
            "slots": int(weights.shape[1]), "chosen": int(round(float(weights.sum())))}


def check_masked_lm_loss(masked_lm_loss, masked_lm=None, preprocessor=None,
                         reviews=None) -> None:
    """Check ``masked_lm_loss(logits, labels, weights)``, then measure it beside Keras's loss.

    Args:
        masked_lm_loss: the student's function.
        masked_lm, preprocessor, reviews: optional; the notebook's ``BertMaskedLM``, its
            preprocessor and a few review strings, for one batch masked as in pre-training.
    """
    refuse_package_calls(LOSS, masked_lm_loss, ("masked_lm_loss_reference",))
    for seed in (0, 1):
        logits, labels, weights = _loss_case(seed)
        got = one_number(LOSS, run_student_code(LOSS, masked_lm_loss, logits.copy(),
                                                labels.copy(), weights.copy()), "masked_lm_loss")
        expected = masked_lm_loss_reference(logits, labels, weights)
        assert_close(LOSS, got, expected, what="your loss for a random case (the mean of −log "
                     "softmax(logits)[label] over the positions whose weight is 1)", mistakes=[
            (masked_lm_loss_reference(logits, labels, np.ones_like(weights)), "you averaged over "
             "every slot; the unused slots (weight 0) are not masked tokens and must not count."),
            (expected * weights.sum() / weights.size, "you summed over the real positions but "
             "divided by the number of all slots; divide by the sum of the weights."),
            (-expected, "the sign is flipped: the loss is the *negative* log-probability of the "
             "true token.")])
    # a large-logit case: a naive softmax overflows
    logits, labels, weights = _loss_case(3)
    got = one_number(LOSS, run_student_code(LOSS, masked_lm_loss, 100.0 * logits, labels,
                                            weights), "masked_lm_loss")
    assert_close(LOSS, got, masked_lm_loss_reference(100.0 * logits, labels, weights), rtol=1e-4,
                 what="the loss for logits of size ~100 (subtract the row maximum before exp)")
    if masked_lm is None:
        passed(LOSS, "Only the chosen tokens are predicted, so only they carry loss.")
        return
    facts = observe(LOSS, _measure_real_batch, masked_lm_loss, masked_lm, preprocessor, reviews)
    require(LOSS, facts["chosen"], "the batch has no chosen token: pass a few reviews of several "
            "words each.")
    require(LOSS, np.isclose(facts["yours"], facts["reference"], rtol=1e-4), f"on a batch of the "
            f"masked LM your loss is {facts['yours']:.5g}; the mean over the chosen tokens is "
            f"{facts['reference']:.5g}.")
    slots = facts["sequences"] * facts["slots"]
    print(f"one batch masked as in pre-training: {facts['sequences']} sequences x "
          f"{facts['slots']} mask slots = {slots} slots, {facts['chosen']} of them chosen tokens")
    for name, value in (("your masked mean (Exercise 2)", facts["yours"]),
                        ("the loss fit logs (keras-hub's loss='auto')", facts["logged"]),
                        ("logged / your masked mean", facts["logged"] / facts["yours"])):
        print(f"  {name:44} {value:8.4f}")
    passed(LOSS, "Only the chosen tokens carry loss. Compare the ratio with your prediction "
                 "(Question 1).")


def _describe_probes(build_probes, test_batches) -> dict:
    """Plain facts about the student's two classifiers, and their accuracy on ``test_batches``."""
    import keras

    probes = value_of(PROBE, build_probes)
    if not isinstance(probes, Mapping):
        return {"type": type(probes).__name__}
    facts = {}
    for name, probe in probes.items():
        if not isinstance(probe, keras.Model):
            facts[str(name)] = {"model": False, "type": type(probe).__name__}
            continue
        backbones = [layer for layer in probe.layers if type(layer).__name__.endswith("Backbone")]
        entry = {"model": True, "backbones": len(backbones),
                 "trainable": sum(int(np.prod(w.shape)) for w in probe.trainable_weights),
                 "steps": int(probe.optimizer.iterations.numpy()) if probe.optimizer else 0}
        if len(backbones) == 1:
            backbone = backbones[0]
            entry["backbone_trainable"] = sum(int(np.prod(w.shape))
                                              for w in backbone.trainable_weights)
            entry["hidden_dim"] = int(backbone.hidden_dim)
            embeddings = np.asarray(backbone.token_embedding.embeddings, "float64")
            entry["fingerprint"] = embeddings[:4, :4]
        correct = total = 0
        for x, y in test_batches:
            logits = np.asarray(probe.predict_on_batch(x))  # compiled: no eager pass per batch
            entry["classes"] = int(logits.shape[-1])
            correct += int((np.argmax(logits, axis=-1) == np.asarray(y)).sum())
            total += int(np.size(y))
        entry["accuracy"] = correct / max(total, 1)
        entry["reviews"] = total
        facts[str(name)] = entry
    return {"type": "mapping", "probes": facts}


def check_frozen_probe(build_probes, test_batches) -> None:
    """Check Exercise 3's probes and print the two accuracies.

    Args:
        build_probes: the student's function returning ``{"MLM-pretrained, frozen":
            classifier, "random weights, frozen": classifier}`` (or that dict itself).
        test_batches: the tokenized test split, ``(inputs, labels)`` batches.
    """
    facts = observe(PROBE, _describe_probes, build_probes, test_batches)
    require(PROBE, facts.get("type") == "mapping", f"build_probes returned a {facts.get('type')}; "
            f"return a dict of the two trained classifiers, {list(PROBE_NAMES)}.")
    found = facts["probes"]
    check_entries(PROBE, {name: {} for name in found}, PROBE_NAMES, (), what="probes")
    for name in PROBE_NAMES:
        entry = found[name]
        require(PROBE, entry.get("model"), f"probes[{name!r}] is a {entry.get('type')}; it should "
                "be the trained keras model.")
        require(PROBE, entry["backbones"] == 1, f"probes[{name!r}] holds {entry['backbones']} "
                "BERT backbones; put the head on exactly one.")
        require(PROBE, not entry["backbone_trainable"], f"probes[{name!r}]: "
                f"{entry['backbone_trainable']:,} of the backbone's parameters are trainable; "
                "freeze it (backbone.trainable = False) before compiling.")
        head = entry["hidden_dim"] * entry["classes"] + entry["classes"]
        require(PROBE, entry["trainable"] == head, f"probes[{name!r}] trains "
                f"{entry['trainable']:,} parameters; only the head's {head:,} (a Dense layer from "
                f"{entry['hidden_dim']} to {entry['classes']}) should train.")
        require(PROBE, entry["classes"] == 2, f"probes[{name!r}] outputs {entry['classes']} "
                "scores per review; two classes, negative and positive.")
        require(PROBE, entry["steps"] >= 1, f"probes[{name!r}] was never trained: compile it and "
                "fit it on the training reviews.")
    first, second = (np.asarray(found[name]["fingerprint"]) for name in PROBE_NAMES)
    require(PROBE, first.shape != second.shape or not np.allclose(first, second), "both probes "
            "read the same encoder weights; one should start from the pretrained backbone, the "
            "other from untrained_copy of it.")
    for name in PROBE_NAMES:
        print(f"{name:24} test accuracy {found[name]['accuracy']:.3f} ({found[name]['reviews']} "
              f"reviews, {found[name]['trainable']:,} trained parameters)")
    passed(PROBE, "Only the heads learned; the encoders are what pre-training (or chance) made "
                  "them.")
