package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolward/toolward/schema"
)

// oauthClient gets and keeps an access token for a url server by the
// OAuth 2.1 client credentials grant, finding the authorization server
// as MCP authorization says: the protected resource metadata (RFC 9728)
// named by the server's 401 (WWW-Authenticate resource_metadata) or at
// its well-known URLs, then that authorization server's metadata
// (RFC 8414, or OpenID Connect discovery) for its token endpoint. The
// client secret is read from the environment when a token is needed and
// is never put in an error.
type oauthClient struct {
	cfg      schema.OAuth
	resource string // the MCP server's URL
	http     *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time // zero: no expiry given
}

// maxOAuthBody bounds each metadata or token answer read.
const maxOAuthBody = 1 << 20

// tokenSlack renews a token this long before it expires.
const tokenSlack = 30 * time.Second

func newOAuthClient(cfg schema.OAuth, resource string, rt http.RoundTripper) *oauthClient {
	return &oauthClient{cfg: cfg, resource: resource, http: &http.Client{Transport: rt, Timeout: 30 * time.Second}}
}

// Token returns a valid access token, getting a new one when there is
// none or it is about to expire.
func (o *oauthClient) Token(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.token != "" && (o.expires.IsZero() || time.Until(o.expires) > tokenSlack) {
		return o.token, nil
	}
	tok, exp, err := o.fetch(ctx)
	if err != nil {
		return "", fmt.Errorf("OAuth client credentials for %s: %w", o.resource, err)
	}
	o.token, o.expires = tok, exp
	return tok, nil
}

// headers is the transport's header function: the bearer token, or no
// header when none can be had (the server's 401 then fails the request).
func (o *oauthClient) headers(ctx context.Context) map[string]string {
	tok, err := o.Token(ctx)
	if err != nil {
		return nil
	}
	return map[string]string{"Authorization": "Bearer " + tok}
}

func (o *oauthClient) fetch(ctx context.Context) (string, time.Time, error) {
	secret := os.Getenv(o.cfg.ClientSecretEnv)
	if secret == "" {
		return "", time.Time{}, fmt.Errorf("environment variable %s (the client secret) is not set", o.cfg.ClientSecretEnv)
	}
	prm, challengeScope, err := o.resourceMetadata(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	if len(prm.AuthorizationServers) == 0 {
		return "", time.Time{}, errors.New("the protected resource metadata names no authorization server")
	}
	as, err := o.serverMetadata(ctx, prm.AuthorizationServers[0])
	if err != nil {
		return "", time.Time{}, err
	}
	if as.TokenEndpoint == "" {
		return "", time.Time{}, fmt.Errorf("authorization server %s has no token_endpoint", prm.AuthorizationServers[0])
	}
	scope := o.cfg.Scope
	if scope == "" {
		scope = challengeScope
	}
	if scope == "" {
		scope = strings.Join(prm.ScopesSupported, " ")
	}
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {o.resource}}
	if scope != "" {
		form.Set("scope", scope)
	}
	basic := len(as.AuthMethods) == 0 || contains(as.AuthMethods, "client_secret_basic")
	if !basic {
		if !contains(as.AuthMethods, "client_secret_post") {
			return "", time.Time{}, fmt.Errorf("the token endpoint takes none of client_secret_basic, client_secret_post (it takes %s)", strings.Join(as.AuthMethods, ", "))
		}
		form.Set("client_id", o.cfg.ClientID)
		form.Set("client_secret", secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(o.cfg.ClientID), url.QueryEscape(secret))
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	status, err := o.do(req, &tok)
	switch {
	case err != nil:
		return "", time.Time{}, fmt.Errorf("token endpoint %s: %w", as.TokenEndpoint, err)
	case tok.Error != "" || status != http.StatusOK:
		return "", time.Time{}, fmt.Errorf("token endpoint %s refused client %s: HTTP %d %s", as.TokenEndpoint, o.cfg.ClientID, status, printable(cut(strings.TrimSpace(tok.Error+" "+tok.Description), quoteLen)))
	case tok.AccessToken == "":
		return "", time.Time{}, fmt.Errorf("token endpoint %s gave no access_token", as.TokenEndpoint)
	case tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer"):
		return "", time.Time{}, fmt.Errorf("token endpoint %s gave a %q token, not a bearer token", as.TokenEndpoint, printable(cut(tok.TokenType, 40)))
	}
	var exp time.Time
	if tok.ExpiresIn > 0 {
		exp = time.Now().Add(time.Duration(tok.ExpiresIn) * time.Second)
	}
	return tok.AccessToken, exp, nil
}

type resourceMetadata struct {
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// resourceMetadata finds the protected resource metadata: the URL a 401
// to an unauthenticated request names, else the well-known URLs for the
// server's path and for its root. It also returns the scope the 401
// asked for, if any.
func (o *oauthClient) resourceMetadata(ctx context.Context) (*resourceMetadata, string, error) {
	u, err := url.Parse(o.resource)
	if err != nil {
		return nil, "", err
	}
	var candidates []string
	scope := ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.resource, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := o.http.Do(req); err == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxOAuthBody))
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			for _, h := range resp.Header.Values("WWW-Authenticate") {
				p := authParams(h)
				if m := p["resource_metadata"]; m != "" {
					if ref, err := u.Parse(m); err == nil && ref.Host == u.Host {
						candidates = append(candidates, ref.String())
					}
				}
				if p["scope"] != "" {
					scope = p["scope"]
				}
			}
		}
	}
	root := &url.URL{Scheme: u.Scheme, Host: u.Host}
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		candidates = append(candidates, root.JoinPath("/.well-known/oauth-protected-resource", p).String())
	}
	candidates = append(candidates, root.JoinPath("/.well-known/oauth-protected-resource").String())
	var last error
	for _, c := range candidates {
		var m resourceMetadata
		if err := o.getJSON(ctx, c, &m); err != nil {
			last = err
			continue
		}
		return &m, scope, nil
	}
	return nil, "", fmt.Errorf("no protected resource metadata found (last: %w)", last)
}

type serverMetadata struct {
	TokenEndpoint string   `json:"token_endpoint"`
	AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
}

// serverMetadata reads an authorization server's metadata from the
// well-known URLs RFC 8414 and OpenID Connect discovery give for its
// issuer URL, in the order the MCP specification lists them.
func (o *oauthClient) serverMetadata(ctx context.Context, issuer string) (*serverMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("authorization server %q is not a URL", printable(cut(issuer, quoteLen)))
	}
	root := &url.URL{Scheme: u.Scheme, Host: u.Host}
	p := strings.TrimSuffix(u.Path, "/")
	var candidates []string
	if p != "" {
		candidates = []string{
			root.JoinPath("/.well-known/oauth-authorization-server", p).String(),
			root.JoinPath("/.well-known/openid-configuration", p).String(),
			root.JoinPath(p, "/.well-known/openid-configuration").String(),
		}
	} else {
		candidates = []string{
			root.JoinPath("/.well-known/oauth-authorization-server").String(),
			root.JoinPath("/.well-known/openid-configuration").String(),
		}
	}
	var last error
	for _, c := range candidates {
		var m serverMetadata
		if err := o.getJSON(ctx, c, &m); err != nil {
			last = err
			continue
		}
		return &m, nil
	}
	return nil, fmt.Errorf("no metadata for authorization server %s (last: %w)", issuer, last)
}

func (o *oauthClient) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	status, err := o.do(req, v)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", u, status)
	}
	return nil
}

// do sends req and decodes a JSON answer (of at most maxOAuthBody) into
// v, whatever its status, which it returns.
func (o *oauthClient) do(req *http.Request, v any) (int, error) {
	resp, err := o.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxOAuthBody+1))
	if err != nil {
		return resp.StatusCode, err
	}
	if len(b) > maxOAuthBody {
		return resp.StatusCode, fmt.Errorf("answer longer than %d bytes", maxOAuthBody)
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), v); err != nil && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, fmt.Errorf("answer is not JSON: %q", quote(b))
	}
	return resp.StatusCode, nil
}

// authParams reads the parameters of a WWW-Authenticate challenge
// (key=value or key="quoted value", comma separated, after the scheme).
func authParams(h string) map[string]string {
	out := map[string]string{}
	_, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimLeft(strings.TrimSpace(rest), ",") {
		k, v, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimLeft(v, " ")
		if strings.HasPrefix(v, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
				}
				b.WriteByte(v[i])
			}
			out[k], rest = b.String(), v[min(i+1, len(v)):]
			continue
		}
		end := strings.IndexAny(v, ", ")
		if end < 0 {
			end = len(v)
		}
		out[k], rest = v[:end], v[end:]
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
