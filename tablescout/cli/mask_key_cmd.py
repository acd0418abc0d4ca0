"""`tablescout mask-key rotate|check`: the secret key behind `hash` column masks (`core.access.mask_key`).

`rotate` writes a new key file atomically (mode 0600); every hash shown from then on differs from the hashes shown
before, so values a user saved or compared no longer match. Workers that read the file use the new key from their next
query. When the key comes from the TABLESCOUT_MASK_KEY setting, `rotate` changes nothing and says to change that
secret instead. `check` says where the key comes from and fails when it cannot be used.
"""

from __future__ import annotations

import typer
from rich.markup import escape

from tablescout.cli.context import console, settings

app = typer.Typer(help="The secret key behind `hash` column masks.", no_args_is_help=True)


@app.command("rotate")
def rotate() -> None:
    """Replace the mask key with a new one: hash-masked values shown before no longer match those shown after."""
    from core.access.mask_key import rotate_key_file

    path = rotate_key_file(settings())  # a MaskKeyError is reported by the command line as an error
    console.print(f"New mask key written to {escape(str(path))} (readable by its owner only).")
    console.print(
        "Hash-masked values shown from now on differ from those shown before: hashes users saved or compared no "
        "longer match. Workers reading this file use the new key from their next query."
    )


@app.command("check")
def check() -> None:
    """Say where the mask key comes from; fail when it cannot be used."""
    from core.access.mask_key import mask_key

    key = mask_key(settings())
    console.print(f"Mask key: from {escape(key.origin)}, usable")
