#!/bin/sh
# render-report.sh DIR [PNG]
#
# Rebuilds DIR's reports with `toolward report` and renders DIR/report.html
# in headless Chromium (Debian package `chromium`): fails when the page
# logs anything to the console, then writes a full-page screenshot, 1280
# pixels wide (default DIR/report.png). The Go test TestBrowserRender
# (internal/analysis/report) does the same checks on a synthetic run; this script is
# for a real result directory.
#
# The report itself has no scripts. To size the screenshot to the whole
# page, a throwaway wrapper page (with a script, in a temporary directory)
# loads the report in a frame and logs its height.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 DIR [PNG]" >&2
	exit 2
fi
dir=$(cd "$1" && pwd)
png=${2:-$dir/report.png}
case $png in /*) ;; *) png=$(pwd)/$png ;; esac
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	echo "$0: no Chromium on PATH (apt-get install chromium)" >&2
	exit 1
fi

(cd "$(dirname "$0")/.." && go run ./cmd/toolward report "$dir")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
url="file://$(printf '%s' "$dir/report.html" | sed 's/%/%25/g; s/ /%20/g; s/#/%23/g; s/?/%3F/g')"
flags="--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$tmp/profile"

# shellcheck disable=SC2086 # flags are words on purpose
"$browser" $flags --enable-logging=stderr --v=0 --dump-dom "$url" >/dev/null 2>"$tmp/log"
if grep -E ':CONSOLE[:(]|Uncaught ' "$tmp/log" >&2; then
	echo "$0: console output while loading the report (above)" >&2
	exit 1
fi

cat >"$tmp/measure.html" <<EOF
<!DOCTYPE html><iframe id="f" src="$url" style="width:1280px;height:100px;border:0"></iframe>
<script>document.getElementById("f").onload = function () {
	console.log("toolward-height=" + this.contentDocument.documentElement.scrollHeight);
};</script>
EOF
# shellcheck disable=SC2086
height=$("$browser" $flags --allow-file-access-from-files --enable-logging=stderr --v=0 --window-size=1280,1000 \
	--dump-dom "file://$tmp/measure.html" 2>&1 >/dev/null | sed -n 's/.*toolward-height=\([0-9][0-9]*\).*/\1/p' | head -n 1)
if [ -z "$height" ]; then
	echo "$0: could not measure the page; the screenshot is the first 2000 pixels" >&2
	height=2000
fi

# shellcheck disable=SC2086
"$browser" $flags --hide-scrollbars --window-size="1280,$height" --screenshot="$png" "$url" 2>/dev/null
echo "screenshot: $png (1280×$height)"
