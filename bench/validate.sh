#!/usr/bin/env bash
# Times `toolward validate` on N synthetic case files (default 1000) plus
# one config, with plain `time`. Run from the repository root:
#   bench/validate.sh [N]
set -euo pipefail
n="${1:-1000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
go build -o "$tmp/toolward" ./cmd/toolward
go run ./bench/casegen/gen -n "$n" "$tmp/suite"
cd "$tmp/suite"
echo "validating $n case files and 1 config on $(nproc) CPUs:"
TIMEFORMAT='%R s wall, %U s user, %S s sys'
for run in 1 2 3; do
	echo -n "run $run: "
	# The summary line on stderr is dropped so that the timings line up;
	# mistakes would still show on stdout (and fail the script).
	time "$tmp/toolward" validate cases configs 2>/dev/null
done
