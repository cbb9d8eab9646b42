#!/usr/bin/env bash
# Session 9, call 5: the CUDA run tests at the final commit (the new test: the device's sums over
# 1,003 groups, more than one fetch step of the reduction, against the host's, fp32 and fp64).
set -uo pipefail
source scripts/gpu-call-lib.sh 5
timeout 280 "$bin/test_cuda_nvrtc" --gtest_brief=1 > "$out/test_cuda_nvrtc.txt" 2>&1; echo "exit $?" >> "$out/test_cuda_nvrtc.txt"
stamp "tests"
