"""Converts Resemblyzer's GE2E voice encoder (pretrained.pt in its PyPI wheel) to raw float32 weights and a
JSON manifest, without PyTorch (cli/tools/speaker-model.ts runs it with the tools venv's Python).

The file is PyTorch's legacy serialization: three small pickles (magic number, protocol, system info), the
checkpoint's pickle whose tensors refer to storages by key, the list of storage keys, then each storage's
element count (int64) and raw little-endian data in that order. The checkpoint's pickle is read by an
Unpickler that knows three names only (an OrderedDict, a tensor rebuilt from a storage, a float storage),
so the file cannot run code.

    python convert-ge2e.py <pretrained.pt> <out-dir>
"""

import collections
import json
import os
import pickle
import struct
import sys

MAGIC = 0x1950A86A20F9469CFC6C
# The model's tensors, as voice_encoder.py names them (3-layer LSTM 40 -> 256, linear 256 -> 256).
WANTED = [
    *(
        f"lstm.{kind}_l{layer}"
        for layer in range(3)
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    ),
    "linear.weight",
    "linear.bias",
]


class Storage:
    def __init__(self, key, size):
        self.key = key
        self.size = size
        self.data = None


class Tensor:
    def __init__(self, storage, offset, shape, stride):
        self.storage, self.offset, self.shape, self.stride = storage, offset, tuple(shape), tuple(stride)


def rebuild_tensor(storage, offset, shape, stride, *_rest):
    return Tensor(storage, offset, shape, stride)


class FloatStorageType:
    pass


class CheckpointUnpickler(pickle.Unpickler):
    ALLOWED = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
        ("torch", "FloatStorage"): FloatStorageType,
    }

    def __init__(self, f):
        super().__init__(f)
        self.storages = {}

    def find_class(self, module, name):
        found = self.ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"unexpected object in the checkpoint: {module}.{name}")
        return found

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and pid[0] == "storage" and pid[1] is FloatStorageType):
            raise pickle.UnpicklingError(f"unexpected storage reference: {pid[:2]!r}")
        key, size = pid[2], pid[4]
        if key not in self.storages:
            self.storages[key] = Storage(key, size)
        return self.storages[key]


def read_checkpoint(path):
    with open(path, "rb") as f:
        if pickle.load(f) != MAGIC:
            raise ValueError(f"{path} is not a PyTorch legacy checkpoint (magic number)")
        protocol = pickle.load(f)
        if protocol != 1001:
            raise ValueError(f"{path}: unsupported PyTorch protocol {protocol}")
        sys_info = pickle.load(f)
        if not sys_info.get("little_endian", False):
            raise ValueError(f"{path}: not little-endian")
        unpickler = CheckpointUnpickler(f)
        checkpoint = unpickler.load()
        keys = pickle.load(f)
        for key in keys:
            storage = unpickler.storages[key]
            (count,) = struct.unpack("<q", f.read(8))
            if count != storage.size:
                raise ValueError(f"storage {key}: {count} elements, expected {storage.size}")
            storage.data = f.read(4 * count)
            if len(storage.data) != 4 * count:
                raise ValueError(f"storage {key}: truncated")
    return checkpoint["model_state"]


def tensor_bytes(t):
    expected = []
    step = 1
    for n in reversed(t.shape):
        expected.insert(0, step)
        step *= n
    if tuple(expected) != t.stride:
        raise ValueError(f"tensor of shape {t.shape} is not contiguous (stride {t.stride})")
    return t.storage.data[4 * t.offset : 4 * (t.offset + step)]


def main(source, out_dir):
    state = read_checkpoint(source)
    os.makedirs(out_dir, exist_ok=True)
    tensors = []
    offset = 0
    with open(os.path.join(out_dir, "weights.f32"), "wb") as out:
        for name in WANTED:
            if name not in state:
                raise ValueError(f"the checkpoint has no {name}")
            data = tensor_bytes(state[name])
            out.write(data)
            tensors.append({"name": name, "shape": list(state[name].shape), "offset": offset})
            offset += len(data) // 4
    manifest = {"format": "ge2e-f32-v1", "tensors": tensors, "elements": offset}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: convert-ge2e.py <pretrained.pt> <out-dir>")
    main(sys.argv[1], sys.argv[2])
