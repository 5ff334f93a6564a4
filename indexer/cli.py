"""Command line of the index-time side: ``python -m indexer ...``.

Exit codes: 0 ok, 2 usage error (click's own). Other commands (init, ingest, backfill,
lookup) register on :data:`main` from their own modules.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from indexer import __version__
from indexer.commands.common import thresholds, thresholds_options
from indexer.fingerprints.params import HASH_NAMES


@click.group()
@click.version_option(__version__, prog_name="neardup-indexer")
def main() -> None:
    """Near-duplicate collapsing: index-time tools."""


def _read_inputs(texts: tuple[str, ...], files: tuple[Path, ...]) -> list[str]:
    """Texts from --text options, then files ('-' = stdin); stdin if neither is given."""
    out = list(texts)
    for f in files:
        out.append(sys.stdin.read() if str(f) == "-" else f.read_text(encoding="utf-8"))
    if not out:
        out.append(sys.stdin.read())
    return out


@main.command()
@click.option("--text", "texts", multiple=True, help="Text to fingerprint (repeatable).")
@click.argument("files", nargs=-1, type=click.Path(exists=False, path_type=Path))
@click.option(
    "--shingle",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="SimHash feature shingle length in words (1 = words).",
)
@click.option(
    "--hash",
    "hash_name",
    type=click.Choice(HASH_NAMES),
    default="blake2b",
    show_default=True,
    help="Token hash for SimHash features.",
)
@click.option(
    "--weights",
    type=click.Choice(["count", "presence"]),
    default="count",
    show_default=True,
    help="Feature weight.",
)
@click.option(
    "--blocks",
    type=click.Choice(["1", "2", "4", "8", "16"]),
    default="4",
    show_default=True,
    help="Number of SimHash blocks.",
)
@click.option(
    "--minhash-shingle",
    type=click.IntRange(1, 64),
    default=None,
    help="MinHash shingle length in words [default: same as --shingle].",
)
@click.option("--compare", is_flag=True, help="Compare exactly two texts.")
@thresholds_options
def fingerprint(
    texts: tuple[str, ...],
    files: tuple[Path, ...],
    shingle: int,
    minhash_shingle: int | None,
    hash_name: str,
    weights: str,
    blocks: str,
    compare: bool,
    max_distance: int,
    min_similarity: float,
) -> None:
    """Print the fingerprint record of a text (from --text, FILES or stdin) as JSON.

    With --compare and two texts, print their Hamming distance, the MinHash similarity
    estimate and the exact Jaccard of their --shingle word shingle sets (what the MinHash
    estimates when --minhash-shingle is left at its default), and the grouping rule's verdict:
    whether the proxy folds one behind the other, and which condition decided.
    """
    import numpy as np

    from indexer.fingerprints import FingerprintParams, fingerprint_batch, hamming, similarity
    from indexer.fingerprints.record import pack_minhash
    from indexer.lookup import verdict
    from indexer.text import jaccard

    for f in files:
        if str(f) != "-" and not f.is_file():
            raise click.BadParameter(f"no such file: {f}", param_hint="FILES")
    inputs = _read_inputs(texts, files)
    params = FingerprintParams(
        shingle=shingle,
        minhash_shingle=minhash_shingle or shingle,
        hash=hash_name,
        weights=weights,
        blocks=int(blocks),
    )
    records = fingerprint_batch(inputs, params)
    if compare:
        if len(records) != 2:
            raise click.UsageError(f"--compare needs exactly two texts, got {len(records)}")
        a, b = records
        out: dict[str, Any] = {
            **verdict(a, b, thresholds(max_distance, min_similarity)).model_dump(),
            "token_count": [a.token_count, b.token_count],
            "hamming": int(hamming(a.simhash, b.simhash)),
            "similarity": round(float(similarity(np.array(a.minhash), np.array(b.minhash))), 4),
            "jaccard": round(jaccard(inputs[0], inputs[1], params.shingle), 4),
            "simhash": [a.simhash_hex, b.simhash_hex],
            "shared_blocks": sum(x == y for x, y in zip(a.blocks, b.blocks, strict=True)),
            "shared_bands": len(set(a.to_es().get("band", [])) & set(b.to_es().get("band", []))),
            "exact_match": a.exact_key == b.exact_key,
            "version": params.version,
        }
        click.echo(json.dumps(out, indent=2))
        return
    for rec in records:
        es = rec.to_es()
        click.echo(
            json.dumps(
                {
                    "simhash": rec.simhash_hex,
                    "blocks": [es[f"block_{i}"] for i in range(params.blocks)],
                    "exact_key": rec.exact_key,
                    "token_count": rec.token_count,
                    "short": rec.short,
                    "minhash": pack_minhash(rec.minhash, params.minhash_bits),
                    "band": es.get("band", []),
                    "version": rec.version,
                    "params": params.model_dump(),
                },
                indent=2,
            )
        )


from indexer.commands.ingest import ingest_command  # noqa: E402
from indexer.commands.init import init_command  # noqa: E402

main.add_command(init_command)
main.add_command(ingest_command)

from indexer.commands.backfill import backfill_command  # noqa: E402

main.add_command(backfill_command)

from indexer.commands.lookup import lookup_command  # noqa: E402

main.add_command(lookup_command)

from indexer.commands.learn import learn_command  # noqa: E402

__all__ = ["fingerprint", "main"]

main.add_command(learn_command)
