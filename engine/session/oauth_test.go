package session

import (
	"errors"
	"net/http/httptest"
	"strings"
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
