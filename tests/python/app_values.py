"""The value generator of src/decomp/values.cpp, reimplemented with numpy so the files the
kernels write can be checked by code that shares nothing with the writer: value(variable name,
element index, seed, step). The one Python copy of the generator (and of its FNV-1a name hash,
src/common/hash.hpp) for the tests."""

from __future__ import annotations

import numpy as np

MASK = (1 << 64) - 1


def splitmix64(x: np.ndarray | int) -> np.ndarray | int:
    if isinstance(x, int):
        x = (x + 0x9E3779B97F4A7C15) & MASK
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
        return x ^ (x >> 31)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def name_hash(name: str) -> int:
    h = 0xCBF29CE484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001B3) & MASK
    return h


def raw(variable: str, count: int, seed: int, step: int = 0) -> np.ndarray:
    """The generator's 64-bit hashes of elements 0 .. count-1 of `variable`."""
    key = splitmix64(seed ^ splitmix64(name_hash(variable) ^ splitmix64(step)))
    index = np.arange(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return splitmix64(np.uint64(key) ^ (index * np.uint64(0xD6E8FEB86659FD93)))


def float32_values(variable: str, count: int, seed: int, step: int = 0) -> np.ndarray:
    h = raw(variable, count, seed, step)
    ints = (h >> np.uint64(40)).astype(np.int64) - (1 << 23)
    return ints.astype(np.float32) / np.float32(1024.0)


def float64_values(variable: str, count: int, seed: int, step: int = 0) -> np.ndarray:
    h = raw(variable, count, seed, step)
    ints = (h >> np.uint64(11)).astype(np.int64) - (1 << 52)
    return ints.astype(np.float64) / 1048576.0


def values(variable: str, dtype: np.dtype, count: int, seed: int, step: int = 0) -> np.ndarray:
    """Elements 0 .. count-1 of `variable` as the generator makes them for `dtype`."""
    if dtype == np.float32:
        return float32_values(variable, count, seed, step)
    if dtype == np.float64:
        return float64_values(variable, count, seed, step)
    h = raw(variable, count, seed, step)
    if dtype == np.uint8:
        return h.astype(np.uint8)
    if dtype == np.int32:
        return h.astype(np.uint32).view(np.int32)
    return h.view(dtype)
