package mcpserver

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// checkHost returns why r must be refused, as a status and a message, or
// 0. A Host that does not parse is refused everywhere (400). Only
// requests that arrived on a loopback address are checked further, as a
// possible DNS-rebinding attack: their Host and Origin must be loopback
// names (403). mcp-go checks the Host too, but only after authentication
// and without closing the connection; refusing here, first, costs a
// rebinding page no bearer-token guess and no held connection.
func checkHost(r *http.Request) (int, string) {
	host, ok := hostOf(r.Host)
	if !ok {
		return http.StatusBadRequest, fmt.Sprintf("bad request: malformed Host %q", r.Host)
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) {
		return 0, ""
	}
	if !isLoopbackHost(host) {
		return http.StatusForbidden, fmt.Sprintf("forbidden: Host %q is not a loopback name", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !isLoopback(u.Host) {
			return http.StatusForbidden, fmt.Sprintf("forbidden: Origin %q is not a loopback origin", o)
		}
	}
	return 0, ""
}

// hostOf returns the host of hostport, a Host header value ("name",
// "name:port", "1.2.3.4:port", "[::1]:port"; the port optional), or
// false if it is malformed: an unclosed bracket, a bare IPv6 address, a
// port that is not a number up to 65535.
func hostOf(hostport string) (string, bool) {
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", false
		}
		host, port = hostport[1:end], hostport[end+1:]
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", false
		}
		if port != "" {
			if port[0] != ':' || len(port) == 1 {
				return "", false
			}
			port = port[1:]
		}
	} else {
		if h, p, found := strings.Cut(hostport, ":"); found {
			host, port = h, p
			if port == "" {
				return "", false
			}
		}
		if host == "" || strings.ContainsAny(host, "[]") {
			return "", false
		}
	}
	if port != "" {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil || len(port) > 5 {
			return "", false
		}
	}
	return host, true
}

// isLoopback reports whether a host:port, or a host (a Host header
// value), names the loopback interface.
func isLoopback(hostport string) bool {
	host, ok := hostOf(hostport)
	return ok && isLoopbackHost(host)
}

// isLoopbackHost reports whether a bare host (a name or an IP address,
// IPv6 without brackets) is loopback.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
