"""Fingerprint core: textbook numbers, seed 001 behaviour, record and ES shape, decoding."""

from __future__ import annotations

import base64
import subprocess
import sys

import numpy as np
import pydantic
import pytest

import indexer.fingerprints as fp
from indexer.fingerprints import (
    FingerprintParams,
    FingerprintRecord,
    decode_many,
    fingerprint,
    fingerprint_batch,
    hamming,
    pairwise_hamming,
    pairwise_similarity,
    popcount64,
    similarity,
    split,
    split_many,
    to_signed,
    to_unsigned,
)
from indexer.fingerprints.features import token_hash

D1 = "the crawler fetches each page and follows its links to new pages"
D2 = "the crawler fetches every page and follows its links to other pages"
TEXTBOOK = FingerprintParams(shingle=1, hash="md5", weights="presence")


def _long_text(seed: int, n_words: int = 600) -> str:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(3000)]
    return " ".join(rng.choice(vocab, size=n_words))


@pytest.mark.parametrize("weights", ["presence", "count"])
def test_textbook_simhash_seed_002(weights: str) -> None:
    # Every word of d1 and d2 occurs once, so count and presence weights agree here.
    p = TEXTBOOK.model_copy(update={"weights": weights})
    a, b = fingerprint(D1, p), fingerprint(D2, p)
    assert a.simhash_hex == "93264c674404019d"
    assert b.simhash_hex == "91060e274484039d"
    assert int(hamming(a.simhash, b.simhash)) == 7


def test_textbook_bit_convention() -> None:
    # The table's "bits 1 to 8" are the top bits of the big-endian 64-bit token hash.
    assert token_hash("md5", b"and") >> 56 == 0b10111110
    assert token_hash("md5", b"crawler") >> 56 == 0b11001101


def test_seed_001_identical_text_distance_zero() -> None:
    text = "the quick brown fox jumps over the lazy dog " * 20
    assert int(hamming(fingerprint(text).simhash, fingerprint(text).simhash)) == 0


def test_seed_001_small_edit_stays_close() -> None:
    original = "the quick brown fox jumps over the lazy dog " * 20
    edited = original.replace("lazy dog", "lazy cat", 1)
    assert int(hamming(fingerprint(original).simhash, fingerprint(edited).simhash)) <= 3


def test_small_edit_in_long_varied_text_stays_close() -> None:
    words = _long_text(1, 1200).split()
    edited = [*words[:500], "inserted", *words[500:]]
    d = hamming(fingerprint(" ".join(words)).simhash, fingerprint(" ".join(edited)).simhash)
    assert int(d) <= 3


def test_seed_001_unrelated_text_is_far() -> None:
    a = "quarterly earnings rose on strong demand " * 20
    b = "the football match ended in a draw after extra time " * 20
    assert int(hamming(fingerprint(a).simhash, fingerprint(b).simhash)) > 12
    assert similarity(fingerprint(a).minhash, fingerprint(b).minhash) < 0.1


def test_minhash_estimates_jaccard() -> None:
    words = _long_text(2, 2000).split()
    variant = words[:1500] + _long_text(3, 500).split()
    a, b = " ".join(words), " ".join(variant)
    p = FingerprintParams(minhash_size=256)
    est = similarity(fingerprint(a, p).minhash, fingerprint(b, p).minhash)
    assert est == pytest.approx(fp.jaccard(a, b, 4), abs=0.1)


def test_record_fields_and_es_roundtrip() -> None:
    rec = fingerprint(_long_text(4))
    assert not rec.short and rec.token_count == 600
    assert rec.version == FingerprintParams().version == "sh51-k4-blake2b-count-b4-mh128x8k4"
    assert len(rec.simhash_hex) == 16 and rec.simhash_hex == rec.simhash_hex.lower()
    es = rec.to_es()
    assert list(es) == [
        "version", "simhash", *(f"block_{i}" for i in range(4)),
        "band", "exact_key", "token_count", "packed",
    ]  # fmt: skip
    stored = int(np.count_nonzero(rec.numbers))
    # 201 bytes (48 + 128 + a 23-byte cell map, padded to a multiple of 3), 3 per cell held
    assert len(es["packed"]) == (201 + 3 * stored) // 3 * 4 and stored < 30
    assert len(es["band"]) == 16 and all(len(k) == 10 for k in es["band"])
    assert -(1 << 63) <= es["simhash"] < 1 << 63
    assert es["simhash"] == int(np.uint64(rec.simhash).view(np.int64))
    assert all(len(es[f"block_{i}"]) == 4 for i in range(4))  # the design card: 4 x 16 bits
    assert "".join(es[f"block_{i}"] for i in reversed(range(4))) == rec.simhash_hex
    raw = base64.b64decode(es["packed"])[48 : 48 + 128]  # the sketch: packed is its one copy
    assert np.frombuffer(raw, dtype="u1").tolist() == rec.minhash
    p16 = FingerprintParams(minhash_size=64, minhash_bits=16)
    rec16 = fingerprint(_long_text(4), p16)
    raw16 = base64.b64decode(rec16.to_es()["packed"])[48 : 48 + 128]
    assert np.frombuffer(raw16, dtype="<u2").tolist() == rec16.minhash
    assert FingerprintRecord.from_es(rec16.to_es()) == rec16
    assert FingerprintRecord.from_es(es) == rec
    wrong = {
        "simhash": es["simhash"] ^ 1,
        "exact_key": "0" * 64,
        "token_count": es["token_count"] + 1,
        "block_0": format(int(es["block_0"], 16) ^ 1, "04x"),
    }
    for name, value in wrong.items():  # the fields beside packed must describe it
        with pytest.raises(ValueError, match=f"stored {name} does not match"):
            FingerprintRecord.from_es({**es, name: value})
    with pytest.raises(ValueError, match="packed"):
        FingerprintRecord.from_es({**es, "packed": es["packed"][:-4]})


def test_record_validation() -> None:
    rec = fingerprint("some words here")
    with pytest.raises(pydantic.ValidationError):
        FingerprintRecord(**{**rec.model_dump(), "blocks": [0] * 8})
    with pytest.raises(pydantic.ValidationError):
        FingerprintRecord(**{**rec.model_dump(), "simhash": 1 << 64})
    with pytest.raises(pydantic.ValidationError):
        FingerprintRecord(**{**rec.model_dump(), "version": "sh1-other"})


def test_sixteen_bit_blocks_are_four_hex_digits() -> None:
    p = FingerprintParams(blocks=4)
    es = fingerprint(_long_text(5), p).to_es()
    assert [len(es[f"block_{i}"]) for i in range(4)] == [4, 4, 4, 4]
    assert "block_4" not in es


def test_signed_unsigned() -> None:
    for u in (0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1):
        s = to_signed(u)
        assert -(1 << 63) <= s < 1 << 63 and to_unsigned(s) == u
    assert to_signed((1 << 64) - 1) == -1
    with pytest.raises(ValueError):
        to_signed(1 << 64)


def test_short_and_empty_documents() -> None:
    empty = fingerprint("")
    assert empty.token_count == 0 and empty.short and empty.simhash == 0
    assert fingerprint("  !!  ").exact_key == empty.exact_key
    short = fingerprint("A short product title")
    assert short.short and short.token_count == 4
    assert not fingerprint("A short product title", FingerprintParams(min_tokens=3)).short
    assert fingerprint("Same  TEXT!").exact_key == fingerprint("same text").exact_key


def test_exact_key_is_sha256_of_token_sequence() -> None:
    import hashlib

    assert fingerprint("Hello,  World").exact_key == hashlib.sha256(b"hello world").hexdigest()


def test_params_validation_and_version_roundtrip() -> None:
    with pytest.raises(pydantic.ValidationError):
        FingerprintParams(blocks=3)
    with pytest.raises(pydantic.ValidationError):
        FingerprintParams(minhash_size=100)
    with pytest.raises(pydantic.ValidationError):
        FingerprintParams(hash="python")  # type: ignore[arg-type]
    p = FingerprintParams(shingle=3, hash="xxh3", weights="presence", blocks=4, minhash_size=128)
    assert FingerprintParams.from_version(p.version) == p
    with pytest.raises(ValueError):
        FingerprintParams.from_version("nope")


@pytest.mark.parametrize("name", fp.HASH_NAMES)
def test_every_hash_name_works(name: str) -> None:
    p = FingerprintParams(hash=name)  # type: ignore[arg-type]
    text = _long_text(6)
    assert fingerprint(text, p) == fingerprint_batch([text], p)[0]


def test_decode_many() -> None:
    recs = fingerprint_batch([_long_text(7), _long_text(8), "tiny"])
    other = fingerprint("x", FingerprintParams(minhash_size=64)).to_es()
    docs = [recs[0].to_es(), None, recs[1].to_es(), other, recs[2].to_es(), {"version": 3}]
    arr = decode_many(docs)
    assert arr.present.tolist() == [True, False, True, False, True, False]
    assert arr.simhash.dtype == np.uint64 and arr.simhash.shape == (6,)
    assert arr.simhash[0] == recs[0].simhash and arr.simhash[2] == recs[1].simhash
    assert arr.minhash.shape == (6, 128) and arr.minhash[4].tolist() == recs[2].minhash
    assert arr.exact_keys[2] == recs[1].exact_key and arr.exact_keys[1] == ""
    assert arr.token_count.tolist() == [600, 0, 600, 0, 1, 0]
    assert arr.short.tolist()[4] and not arr.short.tolist()[0]
    assert (arr.blocks[0] == np.array(recs[0].blocks, dtype=np.uint64)).all()


def test_bits_helpers() -> None:
    x = np.array([0, 1, 3, (1 << 64) - 1], dtype=np.uint64)
    assert popcount64(x).tolist() == [0, 1, 2, 64]
    h = pairwise_hamming(x)
    assert h.shape == (4, 4) and h[0, 3] == 64 and h[1, 2] == 1 and (h == h.T).all()
    assert hamming(x, np.uint64(1)).tolist() == [1, 0, 1, 63]


def test_pairwise_similarity_matches_similarity() -> None:
    recs = fingerprint_batch([_long_text(9), _long_text(9) + " tail words", _long_text(10)])
    m = np.array([r.minhash for r in recs], dtype=np.uint8)
    s = pairwise_similarity(m)
    assert s.shape == (3, 3) and np.allclose(np.diag(s), 1.0)
    assert s[0, 1] == pytest.approx(similarity(m[0], m[1])) and s[0, 1] > 0.9
    assert s[0, 2] < 0.1
    wide = m.astype(np.uint32)
    assert np.allclose(pairwise_similarity(wide, bits=8), s)
    assert similarity(wide[0], wide[2], bits=8) == pytest.approx(s[0, 2])


def test_split_low_block_first() -> None:
    assert split(0x93264C674404019D, 4) == [0x019D, 0x4404, 0x4C67, 0x9326]
    many = split_many(np.array([0x93264C674404019D], dtype=np.uint64), 4)
    assert many.tolist() == [[0x019D, 0x4404, 0x4C67, 0x9326]]


def test_public_names() -> None:
    for name in fp.__all__:
        assert hasattr(fp, name), name


def test_import_indexer_is_light() -> None:
    heavy = "{'numpy', 'pydantic', 'click', 'xxhash'}"
    code = f"import sys, indexer; print(sorted({heavy} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
