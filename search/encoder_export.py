"""Making the int8 encoder's model from sentence-transformers weights: the export to ONNX with torch (mean pooling
and normalisation inside the graph), the texts its agreement with the float model is checked on, and the int8
quantisation. Used only while `search.encoder_onnx` makes a cache entry: torch, transformers and the quantiser are
imported inside the functions, never at run time.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any

CHECK_TEXTS = (
    "how many orders were placed in 2024?",
    "Table ORD_MST (order master) in database erp. Key: ORD_NO. Columns: ORD_NO, ORD_DT, CUST_ID, STATUS_CODE.",
    "Table CUST_MST (customer master) columns: CUST_ID (customer id); CUST_NM (customer name); REGION_CD",
    "which five customers spent the most last year",
    "monthly base salary of employees by department",
    "2024년에 접수된 주문은 모두 몇 건인가요?",
)


def export_pooled(directory: Path, target: Path) -> Any:
    """Export the model with pooling and normalisation to ONNX; returns the float vectors of CHECK_TEXTS."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from search.encoder_base import quiet_transformers

    quiet_transformers()
    model = AutoModel.from_pretrained(str(directory), local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(directory), local_files_only=True)

    class Pooled(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    pooled = Pooled(model).eval()
    sample = tokenizer(list(CHECK_TEXTS), padding=True, truncation=True, max_length=128, return_tensors="pt")
    inputs = (sample["input_ids"], sample["attention_mask"])
    with torch.no_grad():
        reference = pooled(*inputs).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            pooled,
            inputs,
            str(target),
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "tokens"},
                "attention_mask": {0: "batch", 1: "tokens"},
                "embedding": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    return reference


def quantise(source: Path, target: Path, weights: str) -> None:
    """int8 weights per output channel, signed (`s8`) or unsigned (`u8`)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser suggests an optional pre-processing step on the root logger
    try:
        kind = QuantType.QInt8 if weights == "s8" else QuantType.QUInt8
        quantize_dynamic(str(source), str(target), weight_type=kind, per_channel=True)
    finally:
        root.setLevel(level)
