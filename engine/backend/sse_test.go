package backend

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestSSENext: events are their data lines joined by \n, one space after
// the colon dropped, CRLF or LF; every line that carries no data goes to
// skip with its field (a blank line that ends no event with none); a
// last event without its blank line is an event; skip's error ends
// reading.
func TestSSENext(t *testing.T) {
	t.Parallel()
	stream := ": keep-alive\r\n\r\nevent: delta\nid: 7\ndata: {\"a\":\ndata:1}\n\nretry: 10\nnot an event\n\ndata: last"
	r := GetSSE(strings.NewReader(stream))
	defer PutSSE(r)
	var skipped []string
	skip := func(field, line []byte) error {
		skipped = append(skipped, string(field)+"|"+string(line))
		return nil
	}
	var events []string
	for {
		data, err := r.Next(1<<10, skip)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, string(data))
	}
	if got, want := strings.Join(events, ","), "{\"a\":\n1},last"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	want := []string{"|: keep-alive", "|", "event|event: delta", "id|id: 7", "retry|retry: 10", "not an event|not an event", "|"}
	if strings.Join(skipped, ";") != strings.Join(want, ";") {
		t.Errorf("skipped %q, want %q", skipped, want)
	}

	stop := errors.New("stop")
	r2 := GetSSE(strings.NewReader(": x\ndata: never\n\n"))
	defer PutSSE(r2)
	if _, err := r2.Next(1<<10, func(_, _ []byte) error { return stop }); err != stop {
		t.Errorf("skip's error: got %v", err)
	}
}

// TestSSELimits: an event past the limit is ErrEventTooLong with its
// beginning in Data, whether one data line or several make it long; a
// long line that is not data is ErrFieldTooLong; lines longer than the
// read buffer are read whole.
func TestSSELimits(t *testing.T) {
	t.Parallel()
	none := func(_, _ []byte) error { return nil }
	long := strings.Repeat("x", 3*SSEReadBuffer)
	for _, tc := range []struct {
		name, stream string
		limit        int
		want         error
		data         string // Data's beginning, for ErrEventTooLong
	}{
		{"one long data line", "data: " + long + "\n\n", 100, ErrEventTooLong, "xxxx"},
		{"many data lines", strings.Repeat("data: abcdefghij\n", 20) + "\n", 100, ErrEventTooLong, "abcdefghij\nabcdefghij"},
		{"long comment", ": " + long + "\n\n", 100, ErrFieldTooLong, ""},
		{"long id", "id: " + long + "\n\n", 100, ErrFieldTooLong, ""},
		{"long but within", "data: " + long + "\n\n", len(long) + 10, nil, ""},
	} {
		r := GetSSE(strings.NewReader(tc.stream))
		data, err := r.Next(tc.limit, none)
		switch {
		case !errors.Is(err, tc.want):
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		case tc.want == nil && string(data) != long:
			t.Errorf("%s: %d bytes of data, want %d", tc.name, len(data), len(long))
		case tc.want == ErrEventTooLong && !strings.HasPrefix(string(r.Data()), tc.data):
			t.Errorf("%s: Data %.40q, want it to start %q", tc.name, r.Data(), tc.data)
		}
		PutSSE(r)
	}
}

func TestAbbreviate(t *testing.T) {
	t.Parallel()
	if got := Abbreviate([]byte("short")); got != "short" {
		t.Errorf("short: %q", got)
	}
	if got := Abbreviate([]byte(strings.Repeat("y", 200))); got != strings.Repeat("y", 120)+"…" {
		t.Errorf("long: %q", got)
	}
	g := NewGarbled([]byte("{not json"), errors.New("invalid character"))
	if g.Error() != "garbled event {not json: invalid character" || !errors.Is(g, g.Err) {
		t.Errorf("Garbled: %v", g)
	}
}
