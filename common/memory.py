"""The process's memory allocator: keep freed memory for reuse instead of handing it back to the operating system.

An update allocates and frees the same large activations every time (AMAGO-2's critic: (critics, samples x batch x
steps x gammas, width) tensors of ~33 MB at the defaults). glibc's malloc serves such a size from a fresh mmap and
unmaps it on free (or trims the heap's free top), so every update pays the kernel to fault in and zero those pages
again: 55,000 page faults and ~110 of 370 ms per AMAGO-2 update at the defaults on 2 AMD EPYC cores, 40,000 and ~75
of 220 ms per Box-action update (benchmarks/README.md, "Speed"). With freed memory kept, the same update faults
nothing after its first. The process's resident memory then stays at its peak instead of shrinking between updates."""

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
