"""Generated from notebooks/08_pretrained_transformers.ipynb (its #@save cells) by
``python -m seqlab_instructor.lessons``: edit the notebook, not this file."""


import math

import keras
import keras_hub


def mask_selection_length(sequence_length, mask_selection_rate=0.15):
    """Room for one example's chosen positions: twice the expected count, at least 4."""
    return max(4, math.ceil(2 * mask_selection_rate * sequence_length))


def masked_lm_from_scratch(vocabulary, sequence_length=64, hidden_dim=64, num_layers=2,
                           num_heads=2, intermediate_dim=128, dropout=0.1):
    """A randomly initialised BERT masked LM whose `fit` takes raw strings. Example:
    `masked_lm_from_scratch(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the"])`."""
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=list(vocabulary), lowercase=True)
    masking = keras_hub.models.BertMaskedLMPreprocessor(   # 15 % chosen: 80 % [MASK], 10 % random
        tokenizer, sequence_length=sequence_length, mask_selection_rate=0.15, mask_token_rate=0.8,
        mask_selection_length=mask_selection_length(sequence_length), random_token_rate=0.1)
    encoder = keras_hub.models.BertBackbone(                # embeddings + TransformerEncoder stack
        vocabulary_size=len(vocabulary), num_layers=num_layers, num_heads=num_heads,
        hidden_dim=hidden_dim, intermediate_dim=intermediate_dim, dropout=dropout,
        max_sequence_length=sequence_length)
    return keras_hub.models.BertMaskedLM(encoder, preprocessor=masking)  # + the MLM head


def assemble_classifier(backbone, num_classes=2, dropout=0.1):
    """[CLS] -> the backbone's pooled output -> dropout -> Dense: one logit per class.

    Example: `assemble_classifier(masked_lm.backbone)` reads `token_ids`, `segment_ids` and
    `padding_mask`, each `(batch, tokens)`, and returns logits `(batch, num_classes)`."""
    inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
              for name in ("token_ids", "segment_ids", "padding_mask")}
    pooled = backbone(inputs)["pooled_output"]             # (batch, hidden): Dense + tanh on [CLS]
    x = keras.layers.Dropout(dropout, name="classifier_dropout")(pooled)
    init = keras.initializers.TruncatedNormal(stddev=0.02)       # as BERT initialises its weights
    logits = keras.layers.Dense(num_classes, name="logits", kernel_initializer=init)(x)
    return keras.Model(inputs, logits, name="bert_classifier")       # (batch, num_classes)


def untrained_copy(backbone):
    """A new backbone of the same architecture, randomly initialised (from its config)."""
    return type(backbone).from_config(backbone.get_config())


def copy_of(backbone):
    """A new backbone with the same weights (fine-tuning then changes the copy only)."""
    twin = untrained_copy(backbone)
    twin.set_weights(backbone.get_weights())
    return twin
