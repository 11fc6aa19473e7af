#!/usr/bin/env bash
# Peak memory of a job whose MCP server answers every call (the model's
# tool calls and the state probes) with a 15 MiB text: the command
# server is fixtures/fakes/hostilemcp in mode "huge" (one process per
# run, isolation "run"), the model a local fake (bench/fakemodel, its own
# process) that calls echo once and then answers with the result it got.
# Each run makes one tool call and PROBES state probes; the peak RSS is
# that of the toolward process alone (GNU time's "Maximum resident set
# size"), printed with the pass count.
#   bench/hugeresult.sh [-n RUNS] [-j WORKERS] [-p PROBES]
# Defaults: 16 runs, -j 8, 4 probes; TOOLWARD=path measures that binary
# instead of one built from the tree. Run from the repository root.
set -euo pipefail
runs=16 jobs=8 probes=4
while getopts "n:j:p:" opt; do
	case "$opt" in
	n) runs="$OPTARG" ;;
	j) jobs="$OPTARG" ;;
	p) probes="$OPTARG" ;;
	*) echo "usage: $0 [-n RUNS] [-j WORKERS] [-p PROBES]" >&2; exit 2 ;;
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
if [ -n "${TOOLWARD:-}" ]; then cp "$TOOLWARD" "$tmp/toolward"; else go build -o "$tmp/toolward" ./cmd/toolward; fi
go build -o "$tmp/fakemodel" ./bench/fakemodel
go build -o "$tmp/hostilemcp" ./fixtures/fakes/hostilemcp/cmd/hostilemcp

mkfifo "$tmp/fake.in"
"$tmp/fakemodel" -backend ollama -tool echo -args '{}' <"$tmp/fake.in" >"$tmp/fake.url" &
fake_pid=$!
exec 3>"$tmp/fake.in"
for _ in $(seq 50); do [ -s "$tmp/fake.url" ] && break; sleep 0.1; done
url="$(head -1 "$tmp/fake.url")"

mkdir -p "$tmp/cases"
{
	cat <<YAML
id: huge
prompt: Echo something.
needs: [echo]
expect:
  calls: [{tool: echo}]
  state:
YAML
	for _ in $(seq "$probes"); do echo "    - {tool: echo, result: {\$regex: 'a+'}}"; done
} >"$tmp/cases/huge.yaml"
cat >"$tmp/huge.cue" <<CUE
name: "huge"
cases: ["$tmp/cases/*.yaml"]
server: {command: ["$tmp/hostilemcp", "${MODE:-huge}"], isolation: "run"}
backend: ollama: {host: "$url"}
matrix: {models: ["bench-model"], seeds: [$(seq -s, 1 "$runs")]}
limits: {max_iterations: 4, concurrency: $jobs}
output: "$tmp/results"
CUE
GODEBUG="${TW_GODEBUG:-}" /usr/bin/time -v "$tmp/toolward" run -j "$jobs" "$tmp/huge.cue" >"$tmp/out.txt" 2>"$tmp/time.txt" || true
dir="$(ls -d "$tmp"/results/huge/*/ | tail -1)"
pass=$(grep -c '"outcome":"pass"' "$dir/runs.jsonl" || true)
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
errors=$(grep -o '"error":{"kind":"[a-z_]*"' "$dir/runs.jsonl" | sed 's/.*"kind"://' | sort | uniq -c | tr -s ' \n' ' ' || true)
echo "$runs runs, -j $jobs, $probes probes of 15 MiB each: peak RSS $((rss / 1024)) MiB, $pass pass; errors by kind: ${errors:-none}"
grep -v '^\s' "$tmp/time.txt" | head -5 || true
tail -3 "$tmp/out.txt"
if [ -n "${TW_GODEBUG:-}" ]; then cp "$tmp/time.txt" /tmp/hugeresult-stderr.txt; fi
