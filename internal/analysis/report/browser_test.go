package report

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a Chromium-family browser, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// headless runs the browser on a file:// URL with extra flags and returns
// its stdout and stderr. The context bounds a hung browser; it is not a
// timing assertion.
func headless(t *testing.T, bin, page string, extra ...string) (stdout, stderr string) {
	t.Helper()
	// Headless Chromium on a loaded 2-core machine now and then dies of a
	// signal (a segfault in its own start-up) before loading anything: a
	// crash of the browser is retried, up to three starts in all; any
	// other failure, or a third crash, fails the test.
	for try := 1; ; try++ {
		out, errb, err := headlessOnce(bin, page, extra...)
		var ee *exec.ExitError
		if err != nil && errors.As(err, &ee) && !ee.Exited() && try < 3 {
			t.Logf("%s crashed (%v), starting it again", bin, err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, errb)
		}
		return out, errb
	}
}

// headlessOnce runs Chromium once on page with a fresh profile.
func headlessOnce(bin, page string, extra ...string) (stdout, stderr string, err error) {
	profile, err := os.MkdirTemp("", "toolward-chromium-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(profile)
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"}
	args = append(append(args, extra...), "file://"+page)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// consoleLine matches what Chromium logs (with --enable-logging=stderr)
// for a console message or an uncaught exception on the page.
var consoleLine = regexp.MustCompile(`(?m)^.*(:CONSOLE[:(]|Uncaught ).*$`)

// TestBrowserRender opens a generated report from disk in headless
// Chromium: the DOM must have the charts and tables, no script and no
// injected attribute, the console must stay silent, and a full-page
// screenshot is written next to the report (set TOOLWARD_REPORT_DIR to
// keep it).
func TestBrowserRender(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium on PATH (apt-get install chromium)")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}

	// First prove the console check can fail: a page with a console error
	// and an uncaught exception must be caught by consoleLine.
	probe := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(probe, []byte(`<!DOCTYPE html><p>probe</p><script>console.error("probe-error"); notDefined();</script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr := headless(t, bin, probe, "--dump-dom"); len(consoleLine.FindAllString(stderr, -1)) < 2 {
		t.Fatalf("console detection does not work with this browser; stderr:\n%s", stderr)
	}

	dir := os.Getenv("TOOLWARD_REPORT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.Abs(dir)
	lines := encode(t, hostileRuns())
	lines = append(lines, encode(t, demoRuns())...)
	writeRuns(t, filepath.Join(dir, RunsFile), lines)
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, HTMLFile)

	dom, stderr := headless(t, bin, page, "--dump-dom")
	if msgs := consoleLine.FindAllString(stderr, -1); len(msgs) > 0 {
		t.Errorf("console output while loading the report:\n%s", strings.Join(msgs, "\n"))
	}
	for _, want := range []string{
		`<svg id="tool-curve"`, `<svg id="seed-spread"`, `<svg id="reasons-chart"`, `<svg class="ci"`,
		`id="seed-table"`, `id="cells-table"`, `id="confirm-table"`, `id="flaky-table"`, `id="axis-temperature"`, `id="axis-descriptions"`,
		`<details class="case"`, `class="call denied"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %s", want)
		}
	}
	if n := strings.Count(dom, "<polyline"); n != len(s.Models) || n != 4 {
		t.Errorf("tool-count chart has %d lines, want one per model (%d)", n, len(s.Models))
	}
	if liveScript.MatchString(dom) || liveAttr.MatchString(dom) {
		t.Error("rendered DOM has a script element or an onmouseover attribute")
	}
	if !strings.Contains(dom, `&lt;script&gt;alert("x")&lt;/script&gt; sent!`) {
		t.Error("rendered DOM lacks the hostile answer as text")
	}

	// Size the screenshot to the whole page: a throwaway wrapper page (the
	// report itself has no scripts) loads the report in a frame and logs
	// its height, as scripts/render-report.sh does.
	wrapper := filepath.Join(t.TempDir(), "measure.html")
	if err := os.WriteFile(wrapper, []byte(`<!DOCTYPE html><iframe id="f" src="file://`+page+`" style="width:1280px;height:100px;border:0"></iframe>
<script>document.getElementById("f").onload = function () { console.log("toolward-height=" + this.contentDocument.documentElement.scrollHeight); };</script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, measured := headless(t, bin, wrapper, "--allow-file-access-from-files", "--window-size=1280,1000", "--dump-dom")
	m := regexp.MustCompile(`toolward-height=(\d+)`).FindStringSubmatch(measured)
	if m == nil {
		t.Fatalf("could not measure the page height; browser said:\n%s", measured)
	}
	height, _ := strconv.Atoi(m[1])
	if height < 2000 {
		t.Errorf("report is %d pixels tall; the charts, tables and drill-down need more", height)
	}
	shot := filepath.Join(dir, "report.png")
	headless(t, bin, page, "--screenshot="+shot, "--window-size=1280,"+m[1], "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != height {
		t.Errorf("screenshot is %v, want 1280×%d", b, height)
	}
	t.Logf("screenshot: %s", shot)
}

// TestHTMLSelfContained: nothing in report.html may load from elsewhere.
func TestHTMLSelfContained(t *testing.T) {
	dir := writeHostile(t)
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<(script|link|iframe|img|object|embed)\b`),
		regexp.MustCompile(`(?i)\bsrc\s*=`),
		regexp.MustCompile(`(?i)href\s*=\s*"[^#"]`), // only in-page anchors
		regexp.MustCompile(`(?i)@import|url\(`),
	} {
		if m := bad.Find(b); m != nil {
			t.Errorf("report.html is not self-contained: %q", m)
		}
	}
}
