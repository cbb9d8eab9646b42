"""The JAX peers' one timing rule (jax_peers.py, jax_wide.py): a compile and warm-up call on another key, then
`repeats` timed calls, each until its result is ready. jax is imported at the call, after the caller has set
JAX_PLATFORMS and XLA_FLAGS."""
import statistics
import time


def timed_seconds(call, repeats):
    """(median, fastest, slowest) seconds of `repeats` timed calls after a compile and warm-up call."""
    import jax
    jax.block_until_ready(call(0))  # compile and warm up on another key
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(call(1 + i))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)
