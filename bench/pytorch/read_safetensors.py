"""A short safetensors reader for PyTorch, with no library beyond torch: enough to open ladder's
checkpoints (F32 tensors) in Python.

    from read_safetensors import read_safetensors
    tensors, metadata = read_safetensors("runs/00_autograd/model.safetensors")
"""
import json
import struct

import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])  # little-endian u64: the JSON header's size
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        if entry["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} has dtype {entry['dtype']}; this reader takes F32")
        begin, end = entry["data_offsets"]
        values = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.float32)
        tensors[name] = values.reshape(entry["shape"]).clone()
    return tensors, metadata
