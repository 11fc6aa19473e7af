#!/bin/sh
# render-report.sh DIR [PNG]
#
# Rebuilds DIR's reports with `toolward report` and renders DIR/report.html
# in headless Chromium (Debian package `chromium`): writes a 1280×2000
# screenshot (default DIR/report.png) and fails when the page logs anything
# to the console. The Go test TestBrowserRender (engine/report) does the
# same checks on a synthetic run; this script is for a real result dir.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 DIR [PNG]" >&2
	exit 2
fi
dir=$(cd "$1" && pwd)
png=${2:-$dir/report.png}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	echo "$0: no Chromium on PATH (apt-get install chromium)" >&2
	exit 1
fi

go run ./cmd/toolward report "$dir"

profile=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$profile" "$log"' EXIT
flags="--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$profile"

# shellcheck disable=SC2086 # flags are words on purpose
"$browser" $flags --enable-logging=stderr --v=0 --dump-dom "file://$dir/report.html" >/dev/null 2>"$log"
if grep -E ':CONSOLE[:(]|Uncaught ' "$log" >&2; then
	echo "$0: console output while loading the report (above)" >&2
	exit 1
fi
# shellcheck disable=SC2086
"$browser" $flags --hide-scrollbars --window-size=1280,2000 --screenshot="$png" "file://$dir/report.html" 2>/dev/null
echo "screenshot: $png"
