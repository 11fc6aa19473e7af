#!/usr/bin/env bash
# Measures the whole `toolward run` process against a local fake model
# server (bench/fakemodel, a separate process, so its CPU is not counted),
# with the builtin MCP server in-process, for each backend (ollama, openai,
# anthropic):
# CPU time (user + sys) and peak RSS from /usr/bin/time, at two job sizes.
# Every run makes 2 model requests (a calculate call, then the answer), so
# the marginal harness CPU per model request is
#   (CPU(big) - CPU(small)) / (2 * (big - small))
# which start-up (CUE, the case suite, the sandbox database) cannot hide.
# Each (backend, size) is measured REPEATS times; the table gives the
# median and the minimum. Run from the repository root:
#   bench/backends.sh [-r REPEATS] [-j CONCURRENCY] [-b "ollama openai anthropic"] [-t TOOLS] [-g] [SMALL BIG]
# Defaults: 3 repeats, -j 4, all three backends, 500 and 10000 runs, each run
# offered only the tool it needs; -t N offers N of the bundled server's
# tools (the tool subset {count: N}), as a tool-count sweep does.
# -g also measures the same suite with its answers judged ({$judge: …},
# the fake's bench-judge model as judge: one judge request per run), and
# gives the marginal harness CPU per judge request
#   ((CPU_judged(big) - CPU_judged(small)) - (CPU(big) - CPU(small))) / (big - small)
# beside the model request's; the two jobs of a size are measured in turn.
# TOOLWARD=path measures that binary instead of building ./cmd/toolward.
set -euo pipefail
repeats=3 jobs=4 backends="ollama openai anthropic" tools="" judged=""
while getopts "r:j:b:t:g" opt; do
	case "$opt" in
	r) repeats="$OPTARG" ;;
	j) jobs="$OPTARG" ;;
	b) backends="$OPTARG" ;;
	t) tools="$OPTARG" ;;
	g) judged=1 ;;
	*) echo "usage: $0 [-r REPEATS] [-j CONCURRENCY] [-b BACKENDS] [-t TOOLS] [-g] [SMALL BIG]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
small="${1:-500}" big="${2:-10000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
fake_pid=""
cleanup() {
	if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$root"
if [ -n "${TOOLWARD:-}" ]; then
	cp "$TOOLWARD" "$tmp/toolward"
else
	go build -o "$tmp/toolward" ./cmd/toolward
fi
go build -o "$tmp/fakemodel" ./bench/fakemodel

# The suite: $ncases cases, each a 2-request run; a job is the cases x 2
# models x 2 temperatures x SEEDS, so the sizes differ in seeds only and
# start-up (CUE, the suite, the sandbox database) is the same for both.
# cases DIR ANSWER writes them into $tmp/suite/DIR with that answer
# expectation; the judged suite's answer is a rubric for the judge.
ncases=25
cases() {
	mkdir -p "$tmp/suite/$1"
	for ((c = 1; c <= ncases; c++)); do
		cat <<YAML
id: bench-multiply-$c
description: A two-request run for bench/backends.sh.
prompt: What is 6 * 7? Use the calculator. (bench case $c)
needs: [calculate]
expect:
  calls:
    - tool: calculate
      args: {expression: {\$any: true}}
  answer: $2
golden:
  calls:
    - {tool: calculate, args: {expression: "6 * 7"}}
  answer: The result is 42.
---
YAML
	done >"$tmp/suite/$1/bench.yaml"
}
cases cases "{\$regex: '\\b42\\b'}"
cases judged "{\$judge: 'The answer gives the result of 6 * 7, \"42\".'}"

# config BACKEND URL RUNS [judged] writes the config for a job of RUNS
# runs (a multiple of 4 x ncases), of the judged suite with a 4th argument.
config() {
	local be subset="" cases="cases" judge="" seeds=$(($3 / (4 * ncases)))
	if ((seeds * 4 * ncases != $3)); then
		echo "job sizes must be multiples of $((4 * ncases)); $3 is not" >&2
		exit 2
	fi
	case "$1" in
	ollama) be="ollama: host: \"$2\"" ;;
	openai) be="openai: base_url: \"$2\"" ;;
	anthropic) be="anthropic: {base_url: \"$2\", api_key_env: \"\"}" ;;
	esac
	if [ -n "$tools" ]; then
		subset="tools: [{name: \"n$tools\", count: $tools}]"
	fi
	if [ -n "${4:-}" ]; then
		cases="judged" judge="judge: model: \"bench-judge\""
	fi
	cat >"$tmp/suite/$1${4:-}-$3.cue" <<CUE
import "list"

name:  "bench"
cases: ["$cases/*.yaml"]
server: builtin: {}
backend: $be
$judge
matrix: {
	models: ["bench-model", "bench-model-2"]
	temperatures: [0, 0.7]
	seeds: list.Range(1, $seeds+1, 1)
	$subset
}
limits: {concurrency: $jobs, retries: 0}
output: "results"
CUE
}

# median and min of the numbers on stdin
stats() { sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%s %s\n", m, v[1]}'; }

# start_fake BACKEND starts a fresh fake server (it keeps every request it
# gets, so each job gets its own) and sets url and fake_pid.
start_fake() {
	coproc FAKE { exec "$tmp/fakemodel" -backend "$1"; }
	fake_pid=$FAKE_PID
	read -r url <&"${FAKE[0]}"
}

stop_fake() {
	kill "$fake_pid" 2>/dev/null || true
	wait "$fake_pid" 2>/dev/null || true
	fake_pid=""
}

# measure BACKEND RUNS runs the job REPEATS times (with -g, the judged
# job after each try); appends "cpu_s rss_kb wall_s" lines to
# $tmp/BACKEND-RUNS.m (and $tmp/BACKENDjudged-RUNS.m)
measure() {
	local i
	for ((i = 1; i <= repeats; i++)); do
		try "$1" "$2" "$i" ""
		if [ -n "$judged" ]; then try "$1" "$2" "$i" judged; fi
	done
}

# try BACKEND RUNS I VARIANT runs one job: try I of VARIANT ("" or judged).
try() {
	local out="$tmp/out-$1$4-$2-$3" name="$1$4-$2"
	start_fake "$1"
	config "$1" "$url" "$2" "$4"
	if ! (cd "$tmp/suite" && /usr/bin/time -o "$tmp/time" -f '%U %S %M %e' \
		"$tmp/toolward" run -j "$jobs" --out "$out" "$name.cue" >"$tmp/run.log" 2>&1); then
		echo "toolward run failed for $name:" >&2
		grep -v '^[0-9]*/[0-9]* runs' "$tmp/run.log" | tail -5 >&2
		grep -h '"outcome":"error"' "$out/runs.jsonl" 2>/dev/null | head -3 | cut -c1-2000 >&2
		exit 1
	fi
	stop_fake
	if ! grep -q "^$2 runs: $2 pass" "$tmp/run.log"; then
		echo "not every run passed for $name:" >&2
		grep "^$2 runs:" "$tmp/run.log" >&2
		exit 1
	fi
	read -r user sys rss wall <"$tmp/time"
	echo "$user $sys $rss $wall" | awk '{printf "%.3f %d %.2f\n", $1+$2, $3, $4}' >>"$tmp/$name.m"
	echo "  $1${4:+ judged} $2 runs, try $3: $(tail -1 "$tmp/$name.m" | awk '{printf "%.2f s CPU, %.1f MiB peak RSS, %.2f s wall", $1, $2/1024, $3}')" >&2
	rm -rf "$out"
}

echo "machine: $(nproc) CPUs, $(uname -sr), $(go version | cut -d' ' -f3); -j $jobs; $repeats tries each; tools offered: ${tools:-needed}" >&2
rows=() judge_rows=()
for b in $backends; do
	for n in "$small" "$big"; do
		measure "$b" "$n"
	done
	read -r cs_med cs_min < <(cut -d' ' -f1 "$tmp/$b-$small.m" | stats)
	read -r cb_med cb_min < <(cut -d' ' -f1 "$tmp/$b-$big.m" | stats)
	read -r rs_med rs_min < <(cut -d' ' -f2 "$tmp/$b-$small.m" | stats)
	read -r rb_med rb_min < <(cut -d' ' -f2 "$tmp/$b-$big.m" | stats)
	rows+=("$(awk -v b="$b" -v s="$small" -v g="$big" -v csm="$cs_med" -v csn="$cs_min" -v cbm="$cb_med" -v cbn="$cb_min" \
		-v rsm="$rs_med" -v rbm="$rb_med" -v rbn="$rb_min" 'BEGIN {
		req = 2 * (g - s)
		printf "| %s | %.2f s | %.2f s | %.3f ms (min-based %.3f) | %.1f MiB | %.1f MiB (min %.1f) |",
			b, csm, cbm, 1000 * (cbm - csm) / req, 1000 * (cbn - csn) / req, rsm / 1024, rbm / 1024, rbn / 1024 }')")
	if [ -n "$judged" ]; then
		read -r js_med js_min < <(cut -d' ' -f1 "$tmp/${b}judged-$small.m" | stats)
		read -r jb_med jb_min < <(cut -d' ' -f1 "$tmp/${b}judged-$big.m" | stats)
		judge_rows+=("$(awk -v b="$b" -v s="$small" -v g="$big" -v csm="$cs_med" -v cbm="$cb_med" -v csn="$cs_min" -v cbn="$cb_min" \
			-v jsm="$js_med" -v jbm="$jb_med" -v jsn="$js_min" -v jbn="$jb_min" 'BEGIN {
			model = 1000 * (cbm - csm) / (2 * (g - s)); judge = 1000 * ((jbm - jsm) - (cbm - csm)) / (g - s)
			modeln = 1000 * (cbn - csn) / (2 * (g - s)); judgen = 1000 * ((jbn - jsn) - (cbn - csn)) / (g - s)
			printf "| %s | %.2f s | %.2f s | %.3f ms | %.3f ms (%+.0f%%; min-based %.3f against %.3f, %+.0f%%) |",
				b, jsm, jbm, model, judge, 100 * (judge / model - 1), judgen, modeln, 100 * (judgen / modeln - 1) }')")
	fi
done
echo
echo "| backend | CPU, $small runs | CPU, $big runs | marginal CPU per model request | peak RSS, $small runs | peak RSS, $big runs |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if [ -n "$judged" ]; then
	echo
	echo "| backend | CPU judged, $small runs | CPU judged, $big runs | marginal CPU per model request | marginal CPU per judge request |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${judge_rows[@]}"
fi
