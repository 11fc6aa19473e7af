#!/usr/bin/env bash
# Times `toolward plan` on a config whose matrix holds 1,104,000 runs over
# the real case suite (46 cases × 4 models × 50 seeds × 5 temperatures ×
# 8 tool subsets × 3 confirm modes), and `plan --list` streaming every run
# id, with its peak memory. Run from the repository root:
#   bench/plan.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
go build -o "$tmp/toolward" ./cmd/toolward
cat >"$tmp/big.cue" <<'CUE'
name:  "big"
cases: ["cases/**/*.yaml"]
server: builtin: {}
backend: replay: "fixtures/cassettes/demo"
matrix: {
	models: ["m1", "m2", "m3", "m4"]
	seeds: [for s in list.Range(1, 51, 1) {s}]
	temperatures: [0, 0.2, 0.4, 0.7, 1.0]
	tools: [{name: "needed"}, for n in [4, 8, 16, 32, 64, 96] {name: "n\(n)", count: n}, {name: "all"}]
	confirm: ["auto", "approve", "deny"]
	descriptions: ["default"]
}
CUE
sed -i '1i import "list"\n' "$tmp/big.cue"
"$tmp/toolward" plan "$tmp/big.cue" | tail -1
TIMEFORMAT='%R s wall'
{ time "$tmp/toolward" plan "$tmp/big.cue" >/dev/null; } 2>&1 | sed 's/^/plan:        /'
{ time "$tmp/toolward" plan --list "$tmp/big.cue" >/dev/null; } 2>&1 | sed 's/^/plan --list: /'
/usr/bin/time -f 'plan --list peak RSS: %M KB' "$tmp/toolward" plan --list "$tmp/big.cue" >/dev/null
