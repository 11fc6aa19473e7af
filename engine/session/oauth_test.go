package session

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolward/toolward/fixtures/fakes/hostilemcp"
	"github.com/toolward/toolward/fixtures/fakes/oauthserver"
	"github.com/toolward/toolward/schema"
)

// TestOAuthClientCredentials: a url server behind OAuth is reached with a
// token got by client credentials, after discovering the authorization
// server from the 401 (protected resource metadata, then RFC 8414
// metadata), with the scope the 401 asks for, by HTTP Basic or in the
// form as the token endpoint takes; one token serves every connection. A
// wrong secret fails Open with the token endpoint's refusal and without
// the secret.
func TestOAuthClientCredentials(t *testing.T) {
	for _, basicOff := range []bool{false, true} {
		as := &oauthserver.Server{MCP: hostilemcp.Handler("ok"), ClientID: "toolward", Secret: "s3cret", Scope: "mcp:tools", BasicOff: basicOff}
		hs := httptest.NewServer(as)
		t.Cleanup(hs.Close)
		t.Setenv("TW_TEST_SECRET", "s3cret")
		srv := schema.Server{URL: hs.URL + "/mcp", OAuth: &schema.OAuth{ClientID: "toolward", ClientSecretEnv: "TW_TEST_SECRET"}}
		ctx := safety(t)
		src, err := Open(ctx, Options{Server: srv})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			sess, err := src.Session(ctx, ConfirmAuto)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := sess.Call(ctx, "echo", nil, 10*time.Second); err != nil || res.Text != "ok" {
				t.Fatalf("call: %+v, %v", res, err)
			}
			sess.Close()
		}
		src.Close()
		if n := as.Tokens.Load(); n != 1 {
			t.Fatalf("%d tokens granted, want 1", n)
		}

		t.Setenv("TW_TEST_SECRET", "wrong")
		_, err = Open(ctx, Options{Server: srv})
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), "wrong") {
			t.Fatalf("err = %v, want the refusal without the secret", err)
		}
	}
}

// openOAuth serves as on loopback and opens a url server behind it with
// the client secret s3cret.
func openOAuth(t *testing.T, as *oauthserver.Server) (*Source, error) {
	t.Helper()
	as.MCP, as.ClientID, as.Secret, as.Scope = hostilemcp.Handler("ok"), "toolward", "s3cret", "mcp:tools"
	hs := httptest.NewServer(as)
	t.Cleanup(hs.Close)
	t.Setenv("TW_TEST_SECRET", "s3cret")
	srv := schema.Server{URL: hs.URL + "/mcp", OAuth: &schema.OAuth{ClientID: "toolward", ClientSecretEnv: "TW_TEST_SECRET"}}
	src, err := Open(safety(t), Options{Server: srv})
	if err == nil {
		t.Cleanup(func() { src.Close() })
	}
	return src, err
}

// TestOAuthIssuerChecked: authorization server metadata whose issuer is
// not the authorization server's URL is not used (RFC 8414 §3.3), so no
// token is asked for; before, the token endpoint it named got the
// secret (1 token request).
func TestOAuthIssuerChecked(t *testing.T) {
	as := &oauthserver.Server{Issuer: "https://as.evil.example"}
	_, err := openOAuth(t, as)
	if err == nil || !strings.Contains(err.Error(), `gives issuer "https://as.evil.example", not the authorization server's URL (RFC 8414 §3.3)`) {
		t.Fatalf("err = %v, want the issuer refused", err)
	}
	if n := as.TokenRequests.Load(); n != 0 {
		t.Fatalf("%d token requests, want 0", n)
	}
}

// TestOAuthTokenRedirectRefused: a token endpoint's 307 to a third host
// is not followed, and with client_secret_post the secret does not go
// there in the body; before, the third host got 1 request with
// client_secret=s3cret in it.
func TestOAuthTokenRedirectRefused(t *testing.T) {
	var third, leaked atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		third.Add(1)
		if b, _ := io.ReadAll(r.Body); strings.Contains(string(b), "s3cret") {
			leaked.Add(1)
		}
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(hs.Close)
	as := &oauthserver.Server{BasicOff: true, TokenRedirect: hs.URL + "/steal"}
	_, err := openOAuth(t, as)
	if err == nil || !strings.Contains(err.Error(), "answered HTTP 307, a redirect to "+hs.URL+"/steal, which toolward does not follow") {
		t.Fatalf("err = %v, want the redirect refused", err)
	}
	if as.TokenRequests.Load() != 1 || third.Load() != 0 || leaked.Load() != 0 {
		t.Fatalf("%d token requests, %d to the third host (%d with the secret), want 1, 0, 0", as.TokenRequests.Load(), third.Load(), leaked.Load())
	}
}

// TestOAuthPlainHTTPRefused: an authorization server named by an
// http:// URL on a host that is not loopback gets nothing, judged from
// the URL before any connection (the host as.example is mapped to the
// loopback fake by the test's dialer, so a dial would reach it); before,
// the secret went to it over plain HTTP (1 dial, 1 token request). https:// and
// http:// to localhost, 127.0.0.0/8 or ::1 are allowed.
func TestOAuthPlainHTTPRefused(t *testing.T) {
	as := &oauthserver.Server{MCP: hostilemcp.Handler("ok"), ClientID: "toolward", Secret: "s3cret", Scope: "mcp:tools"}
	hs := httptest.NewServer(as)
	t.Cleanup(hs.Close)
	addr := hs.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	as.AuthServer = "http://as.example:" + port
	var dialed atomic.Int64
	rt := http.DefaultTransport.(*http.Transport).Clone()
	rt.DialContext = func(ctx context.Context, network, a string) (net.Conn, error) {
		if strings.HasPrefix(a, "as.example:") {
			dialed.Add(1)
			a = addr
		}
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}
	t.Cleanup(rt.CloseIdleConnections)
	t.Setenv("TW_TEST_SECRET", "s3cret")
	o := newOAuthClient(schema.OAuth{ClientID: "toolward", ClientSecretEnv: "TW_TEST_SECRET"}, hs.URL+"/mcp", rt)
	_, err := o.Token(safety(t))
	if err == nil || !strings.Contains(err.Error(), "authorization server http://as.example:"+port+" is neither https:// nor on loopback") {
		t.Fatalf("err = %v, want plain http to as.example refused", err)
	}
	if dialed.Load() != 0 || as.TokenRequests.Load() != 0 {
		t.Fatalf("%d dials to as.example, %d token requests, want 0", dialed.Load(), as.TokenRequests.Load())
	}
	for raw, ok := range map[string]bool{
		"https://as.example/": true, "http://localhost:8080": true, "http://a.localhost": true,
		"http://127.0.0.2:1": true, "http://[::1]:9": true, "http://LOCALHOST.": true,
		"http://localhost.example": false, "http://10.0.0.1": false, "ftp://localhost": false, "http://127.0.0.1.nip.io": false,
	} {
		if err := secretURL("x", raw); (err == nil) != ok {
			t.Errorf("secretURL(%s) = %v, want allowed %v", raw, err, ok)
		}
	}
}

// TestOAuthTokenLifetime: a token is reused for MCP requests until it is
// due (tokenSlack before it expires, or half its lifetime when that is
// shorter, at most maxTokenLife), on a stopped clock. Before, expires_in
// 1 or 30 (within tokenSlack) and 9223372036854775807 (an overflowing
// duration) took 15 token requests for 14 MCP requests: a new token
// before every request; 0.5 and 1e30 failed Open (not an int64).
func TestOAuthTokenLifetime(t *testing.T) {
	for _, tc := range []struct {
		expiresIn string
		due       time.Duration // from the start, a clock certain to be past the renewal
		notDue    time.Duration // one certain to be before it
	}{
		{"1", time.Hour, 0},
		{"30", time.Hour, 0},
		{"0.5", time.Hour, 0},
		{"1e30", 48 * time.Hour, 23 * time.Hour},
		{"9223372036854775807", 48 * time.Hour, 23 * time.Hour},
	} {
		t.Run(tc.expiresIn, func(t *testing.T) {
			as := &oauthserver.Server{ExpiresIn: tc.expiresIn}
			start := time.Now()
			src, err := openOAuth(t, as)
			if err != nil {
				t.Fatal(err)
			}
			setClock := func(at time.Time) {
				src.oauth.mu.Lock()
				src.oauth.now = func() time.Time { return at }
				src.oauth.mu.Unlock()
			}
			calls := func(n int) {
				ctx := safety(t)
				for range n {
					sess, err := src.Session(ctx, ConfirmAuto)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := sess.Call(ctx, "echo", nil, 10*time.Second); err != nil {
						t.Fatal(err)
					}
					sess.Close()
				}
			}
			setClock(start.Add(tc.notDue))
			calls(10)
			if n, m := as.TokenRequests.Load(), as.MCPRequests.Load(); n != 1 {
				t.Fatalf("%d token requests for %d MCP requests, want 1", n, m)
			}
			setClock(start.Add(tc.due))
			calls(1)
			if n := as.TokenRequests.Load(); n != 2 {
				t.Fatalf("%d token requests once the token was due, want 2", n)
			}
		})
	}
}
