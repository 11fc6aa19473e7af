#!/usr/bin/env bash
# BFCL on its real, full data (issue 25), for CI (.ci/run calls it).
#
# The data is ../shared/bfcl-v4 beside the repository (BFCL v4 as `pip
# install bfcl-eval` lays it out; see its README), or the bfcl_eval/data
# directory $TOOLWARD_BFCL_DATA names. Without it the script says so and
# exits 0: the bundled 1% sample (fixtures/bfcl) is tested by the Go
# tests, but it has none of the real data's quirks.
#
# Sections, each self-contained after the setup (add new ones at the end):
#   setup        build toolward; import every category of the full data
#   single-turn  validate bfcl.cue (its cases, goldens, cassettes and every
#                catalog tool) and replay every single-turn golden offline:
#                each case passes but those BFCL's own checker never passes
#                (tagged bfcl-unpassable, without a golden). All 3,641
#                cases, not a slice: the replay takes seconds.
#   multi-turn   the 800 multi-turn conversations were imported and
#                validate (bfcl_multi_turn.cue); a slice of 40 (10 per
#                category: ids ending in 10-19) replays its goldens offline
#                against BFCL's own back ends (server/bfcl_mcp.py, python3
#                with mpmath, which .ci/run installs) and passes. A slice:
#                each conversation costs ~0.45 CPU-s (two Python processes).
set -euo pipefail
cd "$(dirname "$0")/.."

# ---- setup
data=${TOOLWARD_BFCL_DATA:-../shared/bfcl-v4/bfcl_eval/data}
if [ ! -d "$data" ]; then
	echo "bfcl_ci: skipped: no $data beside the repository (the full BFCL v4 data)"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tw=$work/toolward
go build -o "$tw" ./cmd/toolward
suite=$work/suite
echo "== BFCL: import the full data ($data)"
# The import lists every renamed function on one long line: keep the log.
"$tw" import bfcl "$data" --out "$suite" >"$work/import.log"
grep '^wrote ' "$work/import.log"

# ---- single-turn
single_turn=(simple_python simple_java simple_javascript multiple parallel parallel_multiple irrelevance
	live_simple live_multiple live_parallel live_parallel_multiple live_irrelevance live_relevance)

echo "== BFCL single-turn: the suite validates (every case, golden, cassette and catalog tool of bfcl.cue)"
"$tw" validate "$suite/bfcl.cue"

echo "== BFCL single-turn: the goldens replay offline and pass"
filters=()
for c in "${single_turn[@]}"; do
	filters+=(--filter "tag=$c")
done
unpassable=0
for c in "${single_turn[@]}"; do
	for f in "$suite/cases/$c.yaml" "$suite/cases/$c"-*.yaml; do
		[ -f "$f" ] || continue
		n=$(grep -c '^  - bfcl-unpassable$' "$f" || true)
		unpassable=$((unpassable + n))
	done
done
"$tw" run --out "$work/single-turn" --max-fail "$unpassable" "${filters[@]}" "$suite/bfcl.cue"
# Every failing run is one of the never-passable cases.
if grep '"outcome":"fail"' "$work/single-turn/runs.jsonl" | grep -v '"bfcl-unpassable"'; then
	echo "bfcl_ci: the golden of a passable case failed (above)"
	exit 1
fi
echo "bfcl_ci: single-turn: every golden passes; $unpassable cases BFCL never passes fail as they should"

# ---- multi-turn
echo "== BFCL multi-turn: 800 conversations imported, validated, a slice replayed against BFCL's back ends"
if ! grep -q '^wrote 800 multi-turn conversations' "$work/import.log"; then
	echo "bfcl_ci: multi-turn: the import did not write the 800 conversations:"
	grep -i 'multi-turn\|multi_turn' "$work/import.log" || true
	exit 1
fi
"$tw" validate "$suite/bfcl_multi_turn.cue"
"$tw" run --out "$work/multi-turn" --max-fail 0 --filter 'case=multi_turn_*_1?' "$suite/bfcl_multi_turn.cue" | tee "$work/multi-turn.log"
grep -q '^40 runs: 40 pass, 0 fail, 0 error' "$work/multi-turn.log" || { echo "bfcl_ci: multi-turn: want 40 of 40 goldens to pass"; exit 1; }
echo "bfcl_ci: multi-turn: 40 of 40 goldens pass against BFCL's own back ends"
