#!/usr/bin/env bash
# runs/s of a stateful case against a command server, shared against
# per-run isolated (server.isolation: "run", a fresh process per run from
# the warm pool), with the model a local fake (bench/fakemodel, its own
# process) whose every reply takes DELAY. The server is
# fixtures/fakes/notes (remember/recall over a JSON file), started with a
# start-up delay of START to stand for npx's seconds. Each run remembers a
# fact, then answers (2 model requests). The isolated job also checks the
# end state (expect.state: the file holds exactly the run's fact), and a
# leaked write would fail it: the script prints pass counts too.
#   bench/isolation.sh [-n RUNS] [-j WORKERS] [-d DELAY] [-s START] [-w WARM]
# Defaults: 200 runs, -j 8, 500ms per reply, 1s start-up, warm = workers.
# Run from the repository root.
set -euo pipefail
runs=200 jobs=8 delay=500ms start=1s warm=0
while getopts "n:j:d:s:w:" opt; do
	case "$opt" in
	n) runs="$OPTARG" ;;
	j) jobs="$OPTARG" ;;
	d) delay="$OPTARG" ;;
	s) start="$OPTARG" ;;
	w) warm="$OPTARG" ;;
	*) echo "usage: $0 [-n RUNS] [-j WORKERS] [-d DELAY] [-s START] [-w WARM]" >&2; exit 2 ;;
	esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
fake_pid=""
cleanup() {
	if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$root"
go build -o "$tmp/toolward" ./cmd/toolward
go build -o "$tmp/fakemodel" ./bench/fakemodel
go build -o "$tmp/notes" ./fixtures/fakes/notes/cmd/notes

mkfifo "$tmp/fake.in"
"$tmp/fakemodel" -backend ollama -tool remember -args '{"fact": "the sky is green"}' -delay "$delay" <"$tmp/fake.in" >"$tmp/fake.url" &
fake_pid=$!
exec 3>"$tmp/fake.in"
for _ in $(seq 50); do [ -s "$tmp/fake.url" ] && break; sleep 0.1; done
url="$(head -1 "$tmp/fake.url")"

mkdir -p "$tmp/suite/cases" "$tmp/suite/plain"
cat >"$tmp/suite/plain/remember.yaml" <<YAML
id: remember
prompt: Remember that the sky is green.
needs: [remember]
expect:
  calls: [{tool: remember, args: {fact: the sky is green}}]
YAML
{ cat "$tmp/suite/plain/remember.yaml"; cat <<YAML
  state:
    - tool: recall
      result: {facts: [the sky is green]}
YAML
} >"$tmp/suite/cases/remember.yaml"
seeds="$(seq -s, 1 "$runs")"
config() { # NAME CASES SERVER
	cat <<CUE
name: "$1"
cases: ["$2/*.yaml"]
server: $3
backend: ollama: {host: "$url"}
matrix: {models: ["bench-model"], seeds: [$seeds]}
limits: {max_iterations: 4, concurrency: $jobs}
output: "$tmp/results"
CUE
}
env="NOTES_START_DELAY: \"$start\""
config shared "$tmp/suite/plain" "{command: [\"$tmp/notes\"], env: {$env, NOTES_FILE: \"$tmp/shared.json\"}}" >"$tmp/shared.cue"
warmf=""
if [ "$warm" != 0 ]; then warmf=", warm: $warm"; fi
config isolated "$tmp/suite/cases" "{command: [\"$tmp/notes\"], env: {$env, NOTES_FILE: \"{run_dir}/notes.json\"}, isolation: \"run\"$warmf}" >"$tmp/isolated.cue"

measure() { # CONFIG
	local t0 t1
	t0=$(date +%s.%N)
	"$tmp/toolward" run -j "$jobs" "$1" >"$tmp/out.txt" 2>&1 || true
	t1=$(date +%s.%N)
	local dir
	dir="$(ls -d "$tmp"/results/"$(basename "$1" .cue)"/*/ | tail -1)"
	local pass
	pass=$(grep -c '"outcome":"pass"' "$dir/runs.jsonl" || true)
	awk -v a="$t0" -v b="$t1" -v n="$runs" -v p="$pass" -v name="$(basename "$1" .cue)" \
		'BEGIN { printf "%-9s %5d runs  %6.2f s  %7.2f runs/s  %d pass\n", name, n, b - a, n / (b - a), p }'
}
echo "model reply $delay, server start-up $start, -j $jobs"
measure "$tmp/shared.cue"
measure "$tmp/isolated.cue"
echo "the shared job left $(grep -o "the sky is green" "$tmp/shared.json" | wc -l) facts in its one file, from $runs runs (each run sees the others' writes; concurrent processes also overwrite each other)"
