"""What every encoder module shares, below them all: the vector type and quieting the transformers library.

The encoders (`search.encoder_onnx`, `search.encoder_use`, `search.encoder_static`) import this
module and never `search.encoders`, which chooses among them; so the registry imports its encoders and no encoder
imports it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]
else:
    Vectors = Any  # the real alias is numpy's, named only for type checking so that numpy loads when it is needed


def quiet_transformers() -> None:
    """Model loading reports progress bars on stderr; a command-line user only wants the answer."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
