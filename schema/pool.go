package schema

import (
	"bytes"
	"encoding/json"
	"slices"
)

// PoolHost is one host of a pool of model hosts (backend.ollama.hosts,
// backend.openai.base_urls, backend.anthropic.base_urls). In a config it is a URL string, or an
// object with the URL and the host's own limits.
type PoolHost struct {
	URL string `json:"url"`
	// Concurrency caps requests in flight to this host; 0 means the
	// backend's host_concurrency.
	Concurrency int `json:"concurrency,omitempty"`
	// Models pins models to the host: it serves only these. Empty means
	// any model.
	Models []string `json:"models,omitempty"`
}

// poolHostFields is PoolHost without its methods, for decoding.
type poolHostFields PoolHost

// UnmarshalJSON accepts a URL string or an object with url, concurrency
// and models, refusing unknown fields.
func (h *PoolHost) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		*h = PoolHost{}
		return json.Unmarshal(s, &h.URL)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f poolHostFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*h = PoolHost(f)
	return nil
}

// MarshalJSON writes a host with no limits of its own as its URL, as a
// config would say it.
func (h PoolHost) MarshalJSON() ([]byte, error) {
	if h.Concurrency == 0 && len(h.Models) == 0 {
		return json.Marshal(h.URL)
	}
	return json.Marshal(poolHostFields(h))
}

// Serves reports whether the host serves model: it pins none, or pins it.
func (h PoolHost) Serves(model string) bool {
	return len(h.Models) == 0 || slices.Contains(h.Models, model)
}

// PoolHosts returns the hosts requests go to: Hosts, or Host alone. A
// host's Concurrency is filled in from HostConcurrency when it sets none.
func (o *Ollama) PoolHosts() []PoolHost { return poolHosts(o.Host, o.Hosts, o.HostConcurrency) }

// PoolHosts returns the servers requests go to: BaseURLs, or BaseURL
// alone, with Concurrency filled in as for Ollama.PoolHosts.
func (o *OpenAI) PoolHosts() []PoolHost {
	return poolHosts(o.BaseURL, o.BaseURLs, o.HostConcurrency)
}

// PoolHosts returns the servers requests go to: BaseURLs, or BaseURL
// alone, with Concurrency filled in as for Ollama.PoolHosts.
func (a *Anthropic) PoolHosts() []PoolHost {
	return poolHosts(a.BaseURL, a.BaseURLs, a.HostConcurrency)
}

func poolHosts(one string, many []PoolHost, limit int) []PoolHost {
	if len(many) == 0 {
		return []PoolHost{{URL: one, Concurrency: limit}}
	}
	out := make([]PoolHost, len(many))
	for i, h := range many {
		if h.Concurrency == 0 {
			h.Concurrency = limit
		}
		out[i] = h
	}
	return out
}
