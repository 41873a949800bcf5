#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this): installs
# its own dependencies, then formatting, lints, every unit and integration
# test, and a fuzzing run of the trace reader. Ends with one line
# "tests: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== fuzz the trace reader (60 s)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
echo "== cargo test"
status=0
cargo test --workspace 2>&1 | tee "$log" || status=$?
passed=$(grep -Eo 'test result: .* ([0-9]+) passed' "$log" | grep -Eo '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
if [ "$passed" -eq 0 ]; then
    echo "test.sh: no test ran" >&2
    status=1
fi
echo "tests: $passed passed, $failed failed"
exit "$status"
