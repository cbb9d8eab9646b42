"""What experiments/bench.py is made of, and what other drivers share with it: the one precision of the
drivers (PRECISION), timings (timing.py), strategies and tapes as a user names them (sources.py), the CSV,
table and figures (report.py) and the one careful writer (output.py)."""

# The precision every Python driver times and compiles in (bench.py, zoo.py, python_strategy.py; the scratch_sweep
# drivers and gap_table.py pass it too): fp32, the precision the GPU kernels run in, which every engine has (cpu-jit
# and the interpreters have fp64 as well). Every CSV row and table header names it.
PRECISION = "fp32"
