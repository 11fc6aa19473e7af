package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
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
// is never put in an error. It goes only to an authorization server
// whose metadata names it as the issuer (RFC 8414 §3.3), over https://
// unless the server is on loopback (secretURL), and never along a
// redirect of the token request.
type oauthClient struct {
	cfg      schema.OAuth
	resource string // the MCP server's URL
	http     *http.Client
	// token sends the token request: as http, but redirects are not
	// followed.
	tokenHTTP *http.Client
	now       func() time.Time // time.Now; tests stop the clock

	mu    sync.Mutex
	token string
	renew time.Time // when to get a new one; zero: no expiry given
}

// maxOAuthBody bounds each metadata or token answer read.
const maxOAuthBody = 1 << 20

// A token is renewed tokenSlack before it expires, or at half its
// lifetime when that is shorter (expires_in of 60 s or less), so that a
// server granting 1-second tokens is asked at most twice a second, not
// before every request. An expires_in longer than maxTokenLife (or too
// large for a duration) counts as maxTokenLife.
const (
	tokenSlack   = 30 * time.Second
	maxTokenLife = 24 * time.Hour
)

func newOAuthClient(cfg schema.OAuth, resource string, rt http.RoundTripper) *oauthClient {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &oauthClient{cfg: cfg, resource: resource, now: time.Now,
		http:      &http.Client{Transport: rt, Timeout: 30 * time.Second},
		tokenHTTP: &http.Client{Transport: rt, Timeout: 30 * time.Second, CheckRedirect: noRedirect}}
}

// Token returns a valid access token, getting a new one when there is
// none or it is due for renewal.
func (o *oauthClient) Token(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	if o.token != "" && (o.renew.IsZero() || now.Before(o.renew)) {
		return o.token, nil
	}
	tok, life, err := o.fetch(ctx)
	if err != nil {
		return "", fmt.Errorf("OAuth client credentials for %s: %w", o.resource, err)
	}
	o.token, o.renew = tok, time.Time{}
	if life > 0 {
		o.renew = now.Add(life - min(tokenSlack, life/2))
	}
	return tok, nil
}

// tokenLife reads expires_in (seconds; a JSON number of any size, one
// past float64's range reads as ±Inf): 0 when absent or not positive, at
// most maxTokenLife.
func tokenLife(n json.Number) time.Duration {
	f, _ := strconv.ParseFloat(string(n), 64)
	switch {
	case !(f > 0):
		return 0
	case f >= maxTokenLife.Seconds():
		return maxTokenLife
	}
	return time.Duration(f * float64(time.Second))
}

// secretURL checks a URL the client secret is to go to (an
// authorization server, its token endpoint): https://, or http:// to a
// loopback host (localhost, 127.0.0.0/8, ::1), judged from the URL
// alone, before anything is sent: a name is never resolved for it.
func secretURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not a URL", what, printable(cut(raw, quoteLen)))
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%s %s is neither https:// nor on loopback: toolward sends the client secret only over TLS, or to this machine", what, printable(cut(raw, quoteLen)))
}

// loopbackHost reports whether host (no port) names this machine by
// itself: localhost or a name under .localhost (RFC 6761), or a
// loopback IP address.
func loopbackHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
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

// fetch gets a new token and returns it with its lifetime (0: none
// given).
func (o *oauthClient) fetch(ctx context.Context) (string, time.Duration, error) {
	secret := os.Getenv(o.cfg.ClientSecretEnv)
	if secret == "" {
		return "", 0, fmt.Errorf("environment variable %s (the client secret) is not set", o.cfg.ClientSecretEnv)
	}
	prm, challengeScope, err := o.resourceMetadata(ctx)
	if err != nil {
		return "", 0, err
	}
	if len(prm.AuthorizationServers) == 0 {
		return "", 0, errors.New("the protected resource metadata names no authorization server")
	}
	issuer := prm.AuthorizationServers[0]
	if err := secretURL("authorization server", issuer); err != nil {
		return "", 0, err
	}
	as, err := o.serverMetadata(ctx, issuer)
	if err != nil {
		return "", 0, err
	}
	if as.TokenEndpoint == "" {
		return "", 0, fmt.Errorf("authorization server %s has no token_endpoint", issuer)
	}
	if err := secretURL("the token endpoint of "+issuer, as.TokenEndpoint); err != nil {
		return "", 0, err
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
			return "", 0, fmt.Errorf("the token endpoint takes none of client_secret_basic, client_secret_post (it takes %s)", strings.Join(as.AuthMethods, ", "))
		}
		form.Set("client_id", o.cfg.ClientID)
		form.Set("client_secret", secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(o.cfg.ClientID), url.QueryEscape(secret))
	}
	var tok struct {
		AccessToken string      `json:"access_token"`
		TokenType   string      `json:"token_type"`
		ExpiresIn   json.Number `json:"expires_in"`
		Error       string      `json:"error"`
		Description string      `json:"error_description"`
	}
	status, loc, err := o.do(o.tokenHTTP, req, &tok)
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("token endpoint %s: %w", as.TokenEndpoint, err)
	case status >= 300 && status < 400:
		return "", 0, fmt.Errorf("token endpoint %s answered HTTP %d, a redirect to %s, which toolward does not follow: the client secret would go along", as.TokenEndpoint, status, printable(cut(loc, quoteLen)))
	case tok.Error != "" || status != http.StatusOK:
		return "", 0, fmt.Errorf("token endpoint %s refused client %s: HTTP %d %s", as.TokenEndpoint, o.cfg.ClientID, status, printable(cut(strings.TrimSpace(tok.Error+" "+tok.Description), quoteLen)))
	case tok.AccessToken == "":
		return "", 0, fmt.Errorf("token endpoint %s gave no access_token", as.TokenEndpoint)
	case tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer"):
		return "", 0, fmt.Errorf("token endpoint %s gave a %q token, not a bearer token", as.TokenEndpoint, printable(cut(tok.TokenType, 40)))
	}
	return tok.AccessToken, tokenLife(tok.ExpiresIn), nil
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
	Issuer        string   `json:"issuer"`
	TokenEndpoint string   `json:"token_endpoint"`
	AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
}

// serverMetadata reads an authorization server's metadata from the
// well-known URLs RFC 8414 and OpenID Connect discovery give for its
// issuer URL, in the order the MCP specification lists them. Metadata
// whose issuer is not that URL is not used (RFC 8414 §3.3; OpenID
// Connect Discovery §4.3): a trailing slash is the only difference
// allowed.
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
	var last, lie error // a lie is said rather than a later candidate's absence
	for _, c := range candidates {
		var m serverMetadata
		if err := o.getJSON(ctx, c, &m); err != nil {
			last = err
			continue
		}
		if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			lie = fmt.Errorf("%s gives issuer %q, not the authorization server's URL (RFC 8414 §3.3)", c, printable(cut(m.Issuer, quoteLen)))
			continue
		}
		return &m, nil
	}
	if lie != nil {
		return nil, fmt.Errorf("no metadata for authorization server %s: %w", issuer, lie)
	}
	return nil, fmt.Errorf("no metadata for authorization server %s (last: %w)", issuer, last)
}

func (o *oauthClient) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	status, _, err := o.do(o.http, req, v)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", u, status)
	}
	return nil
}

// do sends req with c and decodes a JSON answer (of at most
// maxOAuthBody) into v, whatever its status, which it returns with the
// answer's Location header.
func (o *oauthClient) do(c *http.Client, req *http.Request, v any) (int, string, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	loc := resp.Header.Get("Location")
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxOAuthBody+1))
	if err != nil {
		return resp.StatusCode, loc, err
	}
	if len(b) > maxOAuthBody {
		return resp.StatusCode, loc, fmt.Errorf("answer longer than %d bytes", maxOAuthBody)
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), v); err != nil && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, loc, fmt.Errorf("answer is not JSON: %q", quote(b))
	}
	return resp.StatusCode, loc, nil
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
