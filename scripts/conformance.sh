#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned to 0.1.13, which runs on Node 20) against `toolward serve --http`.
#
# Scenarios run, and why they apply to toolward's bundled server, a
# tools-only server:
#   server-initialize            initialize handshake, server info, capabilities
#   ping                         ping answered with {}
#   tools-list                   every tool has a name, description and a valid inputSchema
#   server-sse-multiple-streams  concurrent POST requests each get their own SSE stream
#   dns-rebinding-protection     non-loopback Host/Origin refused, localhost accepted
#
# Scenarios left out, and why they do not apply:
#   tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content,
#   -with-logging, -error, -with-progress, -sampling, -elicitation,
#   elicitation-sep1034-defaults, elicitation-sep1330-enums, server-sse-polling,
#   json-schema-2020-12
#       each calls a fixture tool of the reference test server (test_simple_text,
#       test_error_handling, test_elicitation, test_reconnection, …) that a
#       product server does not have; toolward's own tool behaviour (isError
#       results, elicitation before side effects, schemas) is covered by the Go
#       tests in mcpserver/ instead.
#   logging-set-level, completion-complete, resources-*, prompts-*
#       capabilities the server does not declare (it serves tools only).
#
# Usage: scripts/conformance.sh [ADDR]   (default 127.0.0.1:8765)
# Needs Go and npx; npx downloads the suite from the npm registry once.
set -euo pipefail

addr=${1:-127.0.0.1:8765}
version=0.1.13
scenarios=(server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection)

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/toolward" ./cmd/toolward)
"$work/toolward" serve --http "$addr" 2>"$work/serve.log" &
pid=$!
for _ in $(seq 50); do
	grep -q "streamable HTTP at" "$work/serve.log" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
	sleep 0.1
done

failed=0
for s in "${scenarios[@]}"; do
	if npx -y "@modelcontextprotocol/conformance@$version" server --url "http://$addr/mcp" --scenario "$s" >"$work/$s.log" 2>&1; then
		echo "PASS $s"
	else
		echo "FAIL $s"
		sed 's/\x1b\[[0-9;]*m//g' "$work/$s.log" | grep -E 'FAILURE|Error' >&2 || true
		failed=1
	fi
done
exit "$failed"
