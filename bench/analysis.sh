#!/usr/bin/env bash
# Measures the analysis commands on generated result directories
# (bench/resultgen): `toolward report`, `score`, `diff` and `merge`, and
# the decode floor they are held to (resultgen -floor: each record of
# runs.jsonl decoded with encoding/json into a typed record, its trace
# kept raw). For each size it writes a directory of that many runs, a
# second one of the same plan with 5% of the passing runs failing (for
# diff) and the first split in 4 shards (for merge); then it runs each
# command REPEATS times and reports the median CPU time (user + sys) and
# the median peak RSS from /usr/bin/time, the CPU time as a multiple of
# the floor's, and the marginal CPU per 100,000 runs between the sizes:
#   (CPU(big) - CPU(small)) / ((big - small) / 100000)
# Run from the repository root:
#   bench/analysis.sh [-r REPEATS] [-k] [SMALL BIG]
# Defaults: 3 repeats, 100000 and 1000000 runs. -k keeps the generated
# directories (their path is printed). TOOLWARD=path measures that binary
# instead of building ./cmd/toolward.
set -euo pipefail
repeats=3 keep=""
while getopts "r:k" opt; do
	case "$opt" in
	r) repeats="$OPTARG" ;;
	k) keep=1 ;;
	*) echo "usage: $0 [-r REPEATS] [-k] [SMALL BIG]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
small="${1:-100000}" big="${2:-1000000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
cleanup() { if [ -z "$keep" ]; then rm -rf "$tmp"; else echo "kept $tmp" >&2; fi; }
trap cleanup EXIT
cd "$root"
if [ -n "${TOOLWARD:-}" ]; then
	cp "$TOOLWARD" "$tmp/toolward"
else
	go build -o "$tmp/toolward" ./cmd/toolward
fi
go build -o "$tmp/resultgen" ./bench/resultgen

# measure NAME CMD...: runs CMD $repeats times; prints "NAME cpu rss"
# with the median CPU seconds and the median peak RSS in MiB.
measure() {
	local name="$1" cpus=() rsss=()
	shift
	for _ in $(seq "$repeats"); do
		/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/stderr" || {
			# score exits 1 when runs were kept out; anything else is a failure
			[ "$name" = score ] || { cat "$tmp/stderr" >&2; exit 1; }
		}
		read -r u s m <"$tmp/time"
		cpus+=("$(echo "$u + $s" | bc)")
		rsss+=("$((m / 1024))")
	done
	echo "$name $(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(((repeats + 1) / 2))p") $(printf '%s\n' "${rsss[@]}" | sort -n | sed -n "$(((repeats + 1) / 2))p")"
}

for n in "$small" "$big"; do
	d="$tmp/$n"
	"$tmp/resultgen" -n "$n" -out "$d/base" -casedir "$d/suite"
	"$tmp/resultgen" -n "$n" -out "$d/new" -casedir "$d/suite" -drift 0.05
	"$tmp/resultgen" -n "$n" -out "$d/shards" -casedir "$d/suite" -shards 4
	echo "# $n runs, runs.jsonl $(($(stat -c %s "$d/base/runs.jsonl") / 1048576)) MiB" >&2
	{
		measure floor "$tmp/resultgen" -floor "$d/base"
		measure report "$tmp/toolward" report "$d/base"
		measure score sh -c "rm -rf '$d/scored' && exec '$tmp/toolward' score --out '$d/scored' '$d/base'"
		measure diff "$tmp/toolward" diff "$d/base" "$d/new"
		measure merge sh -c "rm -rf '$d/merged' && exec '$tmp/toolward' merge '$d/merged' $d/shards/shard-*"
	} >"$tmp/result-$n"
	rm -rf "$d/scored" "$d/merged"
done

floor_of() { awk '$1 == "floor" { print $2 }' "$tmp/result-$1"; }
printf '%-8s %10s %10s %8s %10s %10s %8s %14s\n' command "cpu@$small" "rss@$small" "x floor" "cpu@$big" "rss@$big" "x floor" "cpu/1e5 runs"
fs="$(floor_of "$small")" fb="$(floor_of "$big")"
for c in floor report score diff merge; do
	read -r _ cs ms < <(grep "^$c " "$tmp/result-$small")
	read -r _ cb mb < <(grep "^$c " "$tmp/result-$big")
	printf '%-8s %9.2fs %7d MiB %7.2fx %9.2fs %7d MiB %7.2fx %13.2fs\n' "$c" "$cs" "$ms" "$(echo "$cs / $fs" | bc -l)" \
		"$cb" "$mb" "$(echo "$cb / $fb" | bc -l)" "$(echo "($cb - $cs) / (($big - $small) / 100000)" | bc -l)"
done
