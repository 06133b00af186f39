"""What the PyTorch 2 peers share (torch2_models.py, torch2_translation.py):
timing, d2l's classes from the parity goldens' verbatim copy, and dimtensor's
weights read by their keys."""

import os
import statistics
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def median_ms(fn, min_time, min_runs=5):
    """The median time of fn in milliseconds over at least min_runs calls and
    min_time seconds, after one call to warm up; and the number of calls."""
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or (time.perf_counter() - start < min_time and len(times) < 1000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, len(times)


def goldens():
    """tests/parity's make_goldens (d2l's attention classes), without the one
    thread and the deterministic kernels it pins for its goldens."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "parity"))
    threads = torch.get_num_threads()
    import make_goldens
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(False)
    return make_goldens


def load_params(folder):
    """A state_dict from dimtensor's folder of <key>.npy: d2l's nn.Sequential
    names its blocks block<i> where dimtensor numbers them."""
    state = {}
    for name in os.listdir(folder):
        parts = name[:-len(".npy")].split(".")
        for i in range(len(parts) - 1):
            if parts[i] == "blks":
                parts[i + 1] = "block" + parts[i + 1]
        state[".".join(parts)] = torch.from_numpy(np.load(os.path.join(folder, name)))
    return state
