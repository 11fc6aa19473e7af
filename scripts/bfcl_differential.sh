#!/bin/sh
# The differential of toolward's multi-turn verdicts against BFCL's own
# checker (docs/bfcl.md, "Differential against BFCL's checker"):
#
#   scripts/bfcl_differential.sh BFCL_ROOT WORK [prepare options]
#
# BFCL_ROOT holds bfcl_eval/ (../shared/bfcl-v4, a gorilla checkout's
# berkeley-function-call-leaderboard/ or a pip install's site-packages).
# It imports the multi-turn categories into WORK/suite, writes the perturbed
# trajectories' cassettes and BFCL's verdicts into WORK/diff, replays them
# with toolward (-j 2) into WORK/results/chunk-N, CHUNK cases at a time
# (default 24, the categories interleaved, so that the chunks done are a
# stratified sample when it is stopped early), and prints the agreement per
# kind and category and every disagreement. Options after WORK go to
# `bfcl_differential.py prepare` (--sample N entries per category, --limit
# N, --categories, --seed). TOOLWARD names the binary (default: toolward on
# PATH). Exit 1 when any trajectory disagrees or has no verdict.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: $0 BFCL_ROOT WORK [--sample N] [--limit N] [--categories C,...] [--seed S]" >&2
	exit 2
fi
root=$(cd "$1" && pwd)
work=$2
shift 2
tw=${TOOLWARD:-toolward}
chunk=${CHUNK:-24}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
rm -rf "$work/suite" "$work/diff" "$work/results"
mkdir -p "$work/results"

start=$(date +%s)
"$tw" import bfcl "$root/bfcl_eval/data" --categories multi_turn_base,multi_turn_miss_func,multi_turn_miss_param,multi_turn_long_context --out "$work/suite" >"$work/import.log"
python3 "$here/bfcl_differential.py" prepare --bfcl-root "$root" --out "$work/diff" --suite "$work/suite" "$@"
prepared=$(date +%s)

split -l "$chunk" -d -a 3 "$work/diff/cases.txt" "$work/diff/chunk-"
for list in "$work"/diff/chunk-*; do
	n=${list##*-}
	set --
	for id in $(cat "$list"); do
		set -- "$@" --filter "case=$id"
	done
	# A run whose trajectories fail exits 0; infrastructure errors show in compare.
	"$tw" run -j 2 --out "$work/results/chunk-$n" "$@" "$work/diff/differential.cue" >"$work/results/chunk-$n.log" 2>&1 || true
	echo "chunk $n done at $(($(date +%s) - prepared))s"
done
ran=$(date +%s)
echo "wall time: prepare $((prepared - start))s (import and BFCL's checker), toolward runs $((ran - prepared))s"
python3 "$here/bfcl_differential.py" compare --out "$work/diff" --results "$work"/results/chunk-*/
