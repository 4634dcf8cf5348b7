"""SPLADE with tokenizers other than BERT's WordPiece: a RoBERTa-style byte-level BPE (whose spaces are tokens),
a tokenizer that does not fit its model, and RoBERTa's position offset.

The models are real transformers masked LMs, randomly initialised, saved to folders and loaded by path as a hub
checkpoint would be; their tokenizers are trained here, offline, with the ``tokenizers`` library.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

import pyterrier_sparse_eval as pse  # noqa: E402
from pyterrier_sparse_eval._splade_parts import splade_max, term_names  # noqa: E402

TEXTS = [
    "birds sing and fly over the sea",
    "fish swim in the deep blue sea",
    "cells divide and grow in the body",
    "the protein binds to the receptor of the cell",
] * 20


def roberta(folder, *, positions: int = 514, model_max_length: int | None = 512, extra_tokens: int = 0):
    """A RobertaForMaskedLM with a byte-level BPE trained on TEXTS, saved to ``folder``."""
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator(TEXTS, vocab_size=300, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    (folder / "bpe").mkdir(parents=True)
    bpe.save_model(str(folder / "bpe"))
    kwargs = {} if model_max_length is None else {"model_max_length": model_max_length}
    tok = transformers.RobertaTokenizerFast(
        vocab=str(folder / "bpe" / "vocab.json"), merges=str(folder / "bpe" / "merges.txt"), **kwargs
    )
    cfg = transformers.RobertaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=positions,
        pad_token_id=tok.pad_token_id,
        type_vocab_size=1,
        initializer_range=0.2,
    )
    torch.manual_seed(0)
    model = transformers.RobertaForMaskedLM(cfg)
    with torch.no_grad():
        model.get_output_embeddings().bias.fill_(-3.4)  # sparse vectors, as a trained SPLADE's
    if extra_tokens:
        tok.add_tokens([f"newtoken{i}" for i in range(extra_tokens)])  # the model not resized
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def bpe_model(tmp_path_factory):
    return roberta(tmp_path_factory.mktemp("roberta"))


def test_a_blank_text_is_empty_in_any_batch(bpe_model):
    tok = transformers.AutoTokenizer.from_pretrained(bpe_model)
    assert len(tok("   ")["input_ids"]) > 2  # its spaces are tokens ("ĠĠ", "Ġ"), not only <s> </s>
    blanks = [" ", "   ", "\n", "\t \n"]
    for batch_size in (1, 2, 16):
        splade = pse.Splade(bpe_model, device="cpu", batch_size=batch_size, verbose=False)
        vecs = splade.encode([*blanks, *TEXTS[:4]], max_length=32)
        assert vecs[: len(blanks)] == [{}] * len(blanks), batch_size
        assert all(vecs[len(blanks) :])


def test_an_index_of_blank_documents_does_not_depend_on_the_batch(bpe_model, tmp_path):
    docs = [
        {"docno": "d1", "text": TEXTS[0]},
        {"docno": "blank", "text": "  "},
        {"docno": "nl", "text": "\n"},
    ]
    topics = pd.DataFrame({"qid": ["1", "2"], "query": [TEXTS[0], " "]})
    runs = []
    for batch_size in (1, 16):
        splade = pse.Splade(bpe_model, device="cpu", batch_size=batch_size, verbose=False)
        index = pse.SparseIndex(tmp_path / f"b{batch_size}")
        with pytest.warns(UserWarning, match="2 of 3 documents have no text"):
            splade.indexer(index, verbose=False).index(docs)
        runs.append(splade.retriever(index).transform(topics))
    pd.testing.assert_frame_equal(runs[0], runs[1])
    assert runs[0]["docno"].tolist() == ["d1"]  # the blank query retrieves nothing, the blank documents never


def test_half_precision_logits_pool_to_the_float32_values():
    torch.manual_seed(0)
    logits = (torch.randn(3, 7, 50) * 4).half()
    mask = torch.tensor([[1] * 7, [1] * 4 + [0] * 3, [0] * 2 + [1] * 5])  # right and left padding
    expected = splade_max(logits.float().clone(), mask)
    got = splade_max(logits.clone(), mask)
    assert got.dtype == torch.float32
    assert torch.equal(got, expected)  # the max of a monotone activation: exactly the same floats


def test_term_names_are_strings_and_distinct():
    # an id a vocabulary skips (None), a token named twice, rows beyond the tokenizer
    assert term_names([None, "a", "a", "b", None]) == ["[id0]", "a", "[id2]", "b", "[id4]"]


def test_a_vocabulary_with_a_gap_names_every_term(tmp_path):
    # a WordPiece vocabulary with a line twice: the fast tokenizer's ids skip one
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "birds", "fish", "birds", "sea", "cells"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    tok = transformers.BertTokenizerFast(vocab=str(tmp_path / "vocab.txt"))
    assert None in tok.convert_ids_to_tokens(list(range(len(words))))
    cfg = transformers.BertConfig(
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
    )
    torch.manual_seed(0)
    transformers.BertForMaskedLM(cfg).save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    names = pse.Splade(tmp_path / "m", device="cpu", verbose=False).load()[3]
    assert all(isinstance(n, str) for n in names) and len(set(names)) == len(names) == len(words)
    assert "cells" in names  # the last token under its own name
    vec = pse.Splade(tmp_path / "m", device="cpu", verbose=False).encode(
        ["birds fish sea cells"], max_length=16
    )[0]
    assert all(isinstance(t, str) for t in vec)


def test_tokens_added_without_resizing_the_model_are_refused_at_load(tmp_path):
    folder = roberta(tmp_path / "m", extra_tokens=2)
    with pytest.raises(
        ValueError, match=r"tokenizer has \d+ tokens, the model \d+ embeddings.*resize_token_embeddings"
    ):
        pse.Splade(folder, device="cpu").load()


def test_a_tokenizer_of_another_model_is_named_so(tmp_path, bpe_model):
    # the model's head widened to 8000 rows: its folder's tokenizer (about 300 tokens) is not the model's
    model = transformers.AutoModelForMaskedLM.from_pretrained(bpe_model)
    model.resize_token_embeddings(8000)
    model.save_pretrained(tmp_path)
    transformers.AutoTokenizer.from_pretrained(bpe_model).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="output rows: it is not the model's"):
        pse.Splade(tmp_path, device="cpu").load()


def test_robertas_positions_start_after_the_padding_id(tmp_path):
    # max_position_embeddings 514, no model_max_length in the tokenizer: 512 positions are usable
    folder = roberta(tmp_path / "m", model_max_length=None)
    assert transformers.AutoTokenizer.from_pretrained(folder).model_max_length > 10**6
    with pytest.raises(ValueError, match="beyond the model's 512 positions"):
        pse.Splade(folder, device="cpu", doc_max_length=513).load()
    splade = pse.Splade(folder, device="cpu", doc_max_length=512, verbose=False)
    (vec,) = splade.encode([" ".join(TEXTS)], max_length=512)  # a text of more than 512 tokens, truncated
    assert vec


def test_a_model_whose_files_changed_is_named_so(tmp_path, bpe_model):
    import shutil

    folder = shutil.copytree(bpe_model, tmp_path / "m")
    splade = pse.Splade(folder, device="cpu", verbose=False)
    index = splade.indexer(pse.SparseIndex(tmp_path / "i"), verbose=False).index(
        [{"docno": "d", "text": TEXTS[0]}]
    )
    config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "padding_side": "left"}))
    with pytest.raises(ValueError, match="as its files were then \\(they have changed since\\)"):
        pse.Splade(folder, device="cpu").retriever(index)
