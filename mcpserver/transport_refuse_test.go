package mcpserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// trickleForever writes one body byte every interval until a write fails
// (the server closed the connection, or the test closed c): a slowloris
// client that never finishes its body.
func trickleForever(c net.Conn, every time.Duration) {
	for {
		if _, err := c.Write([]byte{' '}); err != nil {
			return
		}
		time.Sleep(every)
	}
}

// TestHTTPRefusedSlowBodyClosed: a client that is refused (408, 401,
// 403, 413) and goes on trickling a body shorter than net/http's 256 KiB
// post-handler drain used to keep its connection, and so one of
// MaxConns, for as long as it kept sending. The server must close the
// connection after answering, whatever the client does.
func TestHTTPRefusedSlowBodyClosed(t *testing.T) {
	const bodyLen = 100000 // under net/http's 256 KiB drain: it reads the rest
	s := shared(t)
	timeout := listen(t, s, HTTPOptions{BodyTimeout: 50 * time.Millisecond})
	token := listen(t, s, HTTPOptions{Token: "s3cret", BodyTimeout: time.Hour})
	small := listen(t, s, HTTPOptions{MaxBodyBytes: 1000, BodyTimeout: time.Hour})
	for _, tc := range []struct {
		name, addr, host string
		status           int
	}{
		{"408 body timeout", timeout, timeout, http.StatusRequestTimeout},
		{"401 no token", token, token, http.StatusUnauthorized},
		{"403 foreign Host", token, "evil.example", http.StatusForbidden},
		{"413 declared too large", small, small, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out the refusal's drain on its own connection
			c := dial(t, tc.addr)
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", Path, tc.host, bodyLen)
			if _, err := io.WriteString(c, head); err != nil {
				t.Fatal(err)
			}
			go trickleForever(c, 5*time.Millisecond)
			br := bufio.NewReader(c)
			resp, body := readResp(t, br)
			if resp.StatusCode != tc.status || !resp.Close {
				t.Errorf("status %d (close %v) %q, want %d with Connection: close", resp.StatusCode, resp.Close, body, tc.status)
			}
			if strings.TrimSpace(body) == "" {
				t.Error("refusal without a message")
			}
			closed(t, br)
		})
	}
}
