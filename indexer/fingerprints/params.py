"""Fingerprint parameters and the version string that identifies stored values.

Every parameter that changes a stored value is encoded in :attr:`FingerprintParams.version`,
e.g. ``sh51-k4-blake2b-count-b4-mh128x8k4``: algorithm generation ``sh51``, SimHash shingle
length, feature hash, weights, number of blocks, MinHash size x value bits and MinHash
shingle length. ``min_tokens`` is a grouping policy on ``token_count`` and is not encoded.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ALGORITHM", "HASH_NAMES", "FingerprintParams", "HashName", "Weights"]

ALGORITHM = "sh51"
HashName = Literal["blake2b", "md5", "sha1", "xxh64", "xxh3"]
HASH_NAMES: tuple[str, ...] = ("blake2b", "md5", "sha1", "xxh64", "xxh3")
Weights = Literal["count", "presence"]

_VERSION = re.compile(
    r"^(?P<alg>[a-z0-9]+)-k(?P<k>\d+)-(?P<hash>[a-z0-9]+)-(?P<weights>count|presence)"
    r"-b(?P<blocks>\d+)-mh(?P<size>\d+)x(?P<bits>\d+)k(?P<mk>\d+)$"
)


class FingerprintParams(BaseModel):
    """How fingerprints are computed; frozen and picklable so worker processes can share it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shingle: int = Field(4, ge=1, le=64, description="SimHash feature: k-word shingles (1 = words)")
    hash: HashName = Field("blake2b", description="token hash feeding the SimHash features")
    weights: Weights = Field("count", description="feature weight: occurrences or presence")
    blocks: int = Field(
        4, description="equal SimHash blocks stored (indexed where the index probes blocks)"
    )
    minhash_size: int = Field(128, description="MinHash sketch values (power of two, 8..1024)")
    minhash_bits: Literal[8, 16, 32] = Field(8, description="bits kept per MinHash value")
    minhash_shingle: int = Field(4, ge=1, le=64, description="MinHash k-word shingle length")
    min_tokens: int = Field(9, ge=0, description="below this, documents group by exact key only")

    @field_validator("blocks")
    @classmethod
    def _blocks_divide_64(cls, v: int) -> int:
        if v not in (1, 2, 4, 8, 16):
            raise ValueError(
                f"blocks={v} must split 64 bits into equal hex-aligned blocks: use 1, 2, 4, 8 or 16"
            )
        return v

    @field_validator("minhash_size")
    @classmethod
    def _size_power_of_two(cls, v: int) -> int:
        if v < 8 or v > 1024 or v & (v - 1):
            raise ValueError(f"minhash_size={v} must be a power of two between 8 and 1024")
        return v

    @property
    def block_bits(self) -> int:
        """Width of one block in bits."""
        return 64 // self.blocks

    @property
    def version(self) -> str:
        """Algorithm and every value-changing parameter, stored with each fingerprint."""
        return (
            f"{ALGORITHM}-k{self.shingle}-{self.hash}-{self.weights}-b{self.blocks}"
            f"-mh{self.minhash_size}x{self.minhash_bits}k{self.minhash_shingle}"
        )

    @classmethod
    def from_version(cls, version: str, *, min_tokens: int = 9) -> FingerprintParams:
        """Rebuild the parameters from a stored version string (ValueError if unknown)."""
        m = _VERSION.match(version)
        if m is None or m["alg"] != ALGORITHM:
            raise ValueError(f"unrecognised fingerprint version {version!r}")
        return cls(
            shingle=int(m["k"]),
            hash=m["hash"],
            weights=m["weights"],
            blocks=int(m["blocks"]),
            minhash_size=int(m["size"]),
            minhash_bits=int(m["bits"]),
            minhash_shingle=int(m["mk"]),
            min_tokens=min_tokens,
        )
