#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against toolward's MCP server and its MCP client.
#
# 1. Server scenarios (suite 0.1.13, which runs on the system's Node 20)
#    against `toolward serve --http`.
# 2. Client scenarios (suite 0.1.16, which needs Node 22: both are installed
#    with npm into a local prefix, $TOOLWARD_CONFORMANCE_PREFIX or a
#    temporary directory) against toolward's client, `toolward tools --url`
#    (scripts/conformance-client.sh says what each scenario runs).
#
# Server scenarios run, and why they apply to toolward's bundled server, a
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
# Client scenarios run (all that apply to a tools client):
#   initialize                           handshake: protocol version, client info
#   tools_call                           list the tools, call add_numbers
#   elicitation-sep1034-client-defaults  answer an elicitation with the schema's defaults
#   sse-retry                            resume a closed SSE stream after its retry
#                                        time, with Last-Event-ID
#   auth/client-credentials-basic        discover the authorization server from the
#                                        401 and get a token by client credentials
#
# Client scenarios left out, and why:
#   every other auth/* scenario
#       the authorization-code grant (PKCE, dynamic or metadata-document client
#       registration, scopes, step-up), where a user approves access in a
#       browser, or (pre-registration) a JWT-bearer assertion grant; toolward
#       runs unattended. For a server behind such an authorization server, get
#       a token out of band and set server.headers.
#   auth/client-credentials-jwt
#       the client authenticates with a signed JWT (private_key_jwt); toolward's
#       OAuth client has client secrets only (server.oauth).
#   auth/cross-app-access-complete-flow
#       token exchange from an identity provider's assertion, for apps acting
#       for a signed-in user.
#
# Usage: scripts/conformance.sh [ADDR]   (default 127.0.0.1:8765)
# Needs Go, npx and npm; they download the suites and Node 22 from the npm
# registry.
set -euo pipefail

addr=${1:-127.0.0.1:8765}
version=0.1.13
scenarios=(server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection)
client_version=0.1.16
client_scenarios=(initialize tools_call elicitation-sep1034-client-defaults sse-retry auth/client-credentials-basic)

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

prefix=${TOOLWARD_CONFORMANCE_PREFIX:-$work/npm}
mkdir -p "$prefix"
npm install --silent --no-audit --no-fund --prefix "$prefix" node@22 "@modelcontextprotocol/conformance@$client_version" >"$work/npm.log" 2>&1 || { cat "$work/npm.log" >&2; exit 1; }
export TOOLWARD="$work/toolward"
for s in "${client_scenarios[@]}"; do
	if PATH="$prefix/node_modules/.bin:$PATH" conformance client --command "$root/scripts/conformance-client.sh" --scenario "$s" >"$work/client-${s//\//-}.log" 2>&1; then
		echo "PASS client $s"
	else
		echo "FAIL client $s"
		sed 's/\x1b\[[0-9;]*m//g' "$work/client-${s//\//-}.log" | grep -E 'FAILURE|WARNING|Error|Stderr' -A3 >&2 || true
		failed=1
	fi
done
exit "$failed"
