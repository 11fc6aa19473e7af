#!/usr/bin/env bash
# The client under test for the MCP conformance suite's client scenarios
# (scripts/conformance.sh runs it): the suite starts a test server, then
# runs this script with the server's URL as its last argument and the
# scenario's name in MCP_CONFORMANCE_SCENARIO. Each scenario is plain
# `toolward tools` against the URL, with the one --call the scenario's
# server expects (its tool and arguments); nothing else is scripted.
# TOOLWARD is the binary to run.
set -euo pipefail
url=${!#}
tw=("${TOOLWARD:?}" tools --timeout 20s --url "$url")
case "${MCP_CONFORMANCE_SCENARIO:-}" in
initialize) exec "${tw[@]}" ;;
tools_call) exec "${tw[@]}" --call add_numbers --args '{"a":2,"b":3}' ;;
elicitation-sep1034-client-defaults) exec "${tw[@]}" --call test_client_elicitation_defaults --confirm approve ;;
sse-retry) exec "${tw[@]}" --call test_reconnection ;;
auth/client-credentials-basic)
	# The scenario hands the client its credentials in MCP_CONFORMANCE_CONTEXT.
	id=$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT).client_id)')
	TOOLWARD_CONFORMANCE_SECRET=$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT).client_secret)')
	export TOOLWARD_CONFORMANCE_SECRET
	exec "${tw[@]}" --oauth-client-id "$id" --oauth-secret-env TOOLWARD_CONFORMANCE_SECRET ;;
*) echo "conformance-client: no client for scenario ${MCP_CONFORMANCE_SCENARIO:-}" >&2; exit 2 ;;
esac
