"""The process's memory allocator: keep freed memory for reuse instead of handing it back to the operating system.

An update allocates and frees the same large activations every time (AMAGO-2's critic: (critics, samples x batch x
steps x gammas, width) tensors of up to 33 MB at the defaults). glibc's malloc serves such a size from a fresh mmap
and unmaps it on free (or trims the heap's free top), so every update pays the kernel to fault in and zero those
pages again. On one AMD EPYC core at the defaults, AMAGO-2's update faulted ~43,000 pages (~70 ms of kernel time) and
took 293 ms, 222 ms with freed memory kept; the Box-action update ~21,000 pages, 169 ms against 134
(benchmarks/results/speed/keep_freed_memory_*.json). With freed memory kept, an update still faulted 19 to 840 pages
(medians 44 for AMAGO's Discrete update, 147 for its Box one, 195 for AMAGO-2's: 0.5-2% of the faults without). The
process's resident memory then stays at its peak instead of shrinking between updates."""

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's mallopt parameters (malloc.h)


def keep_freed_memory():
    """glibc: never trim the heap, never mmap (so large blocks come from the heap and stay there). -> True when
    applied; False where the C library is not glibc (macOS, musl): nothing changes there."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1) and mallopt(M_MMAP_MAX, 0))
