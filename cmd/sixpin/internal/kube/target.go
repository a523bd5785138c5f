package kube

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sixpin/sixpin/internal/redact"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/tokenizer"
)

// target is what the pods' `sixpin run` is told about the endpoint.
type target struct {
	// args are run's --profile, --endpoint and --model.
	args []string
	// file is a profile file that travels in the ConfigMap.
	file *configFile
	// keyEnv is the variable the API key is read from ("" for the
	// simulator).
	keyEnv    string
	simulated bool
	notes     []string
}

// resolveTarget works out, as `sixpin run` will in the pods, which
// profile and endpoint apply — the flags, else the scenario's target, else
// the built-in simulator — and checks that the pods can reach and read
// them.
func resolveTarget(sc *scenario.Scenario, opts Options) (*target, error) {
	// The URLs that travel: --endpoint in the Job's arguments, the
	// scenario (target.endpoint) in the ConfigMap, whichever is used.
	if err := noCredential(opts.Endpoint, "--endpoint", "Job"); err != nil {
		return nil, err
	}
	if err := noCredential(sc.Target.Endpoint, "the scenario's target.endpoint", "ConfigMap"); err != nil {
		return nil, err
	}
	ref, endpoint, model := opts.Profile, opts.Endpoint, opts.Model
	if opts.Profile == "" {
		ref = sc.Target.Profile
		if endpoint == "" {
			endpoint = sc.Target.Endpoint
		}
		if model == "" {
			model = sc.Target.Model
		}
	}
	eff := ref
	if eff == "" {
		eff = profiles.DefaultSimulator
		if endpoint != "" {
			eff = profiles.KindOpenAICompatible
		}
	}
	p, err := profiles.Resolve(eff)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	t := &target{simulated: p.Simulated()}
	for _, tok := range []string{p.Tokenizer, simTokenizer(p)} {
		if strings.HasPrefix(tok, tokenizer.HFPrefix) {
			return nil, badf("profile %s: tokenizer %s is a file on this machine, which the pods cannot read: name a built-in tokenizer or %q", p.Name, tok, profiles.TokenizerServer)
		}
	}
	switch {
	case p.Source != "embedded":
		// A file: it travels in the ConfigMap under its own name (its
		// default profile name). Passing --profile makes run ignore the
		// scenario's target, so its endpoint and model are passed too.
		f, err := profileFile(p)
		if err != nil {
			return nil, err
		}
		t.file = f
		t.args = append(t.args, "--profile", ConfigDir+"/"+f.path)
		opts.Endpoint, opts.Model = endpoint, model
	case opts.Profile != "":
		t.args = append(t.args, "--profile", opts.Profile)
	}
	if opts.Endpoint != "" {
		t.args = append(t.args, "--endpoint", opts.Endpoint)
	}
	if opts.Model != "" {
		t.args = append(t.args, "--model", opts.Model)
	}
	for i, a := range t.args {
		t.args[i] = strings.ReplaceAll(a, "$", "$$") // no $(VAR) expansion of the user's words
	}

	if t.simulated {
		if endpoint != "" {
			return nil, badf("--endpoint cannot be used with simulator profile %s", p.Name)
		}
		t.notes = append(t.notes, fmt.Sprintf("profile %s is the built-in simulator: every pod simulates its own endpoint, a rehearsal of the plumbing rather than a benchmark", p.Name))
		return t, nil
	}
	from := "--endpoint"
	if endpoint == "" {
		endpoint, from = p.BaseURL, "profile "+p.Name+"'s base_url"
	} else if opts.Endpoint == "" {
		from = "the scenario's target.endpoint"
	}
	if endpoint == "" {
		return nil, badf("profile %s has no base_url: give --endpoint URL", p.Name)
	}
	if err := checkEndpoint(endpoint, from); err != nil {
		return nil, err
	}
	t.keyEnv = p.KeyEnv()
	return t, nil
}

// simTokenizer is the tokenizer a simulator profile's sim: section names
// (read from its YAML: kube does not link the simulator).
func simTokenizer(p *profiles.Profile) string {
	if p.Sim == nil || p.Sim.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(p.Sim.Content); i += 2 {
		if p.Sim.Content[i].Value == "tokenizer" {
			return p.Sim.Content[i+1].Value
		}
	}
	return ""
}

// profileFile reads a profile file for the ConfigMap, refusing one whose
// headers look like credentials: a ConfigMap is readable by anyone who
// may read the namespace's configuration.
func profileFile(p *profiles.Profile) (*configFile, error) {
	for h := range p.Headers {
		if redact.LooksSecret(h) {
			return nil, badf("%s: headers.%s looks like a credential, and the profile would travel in a ConfigMap: put the key in a Secret (--api-key-secret) and name it in api_key_env", p.Source, h)
		}
	}
	if err := noCredential(p.BaseURL, "profile "+p.Name+"'s base_url", "ConfigMap"); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p.Source)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	base := filepath.Base(p.Source)
	key := "profile." + base
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return nil, badf("%s: the file name must be a ConfigMap key (letters, digits, '-', '_', '.'): rename it", p.Source)
	}
	return &configFile{key: key, path: "profile/" + base, data: data}, nil
}

// checkEndpoint refuses an endpoint the pods cannot use. It never echoes
// a URL's credentials (see noCredential for those).
func checkEndpoint(raw, from string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badf("%s: not an http(s) URL ending in /v1", from)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || strings.HasSuffix(host, ".localhost") || ip != nil && ip.IsLoopback() {
		return badf("%s %s: a loopback address in a pod is the pod itself: give the endpoint as the pods reach it (a Service: http://vllm.NAMESPACE.svc:8000/v1)", from, redact.URL(raw))
	}
	return nil
}

// noCredential refuses a URL that would travel in object (the Job's
// arguments, the ConfigMap) while carrying a credential: user info, or a
// query parameter such as api-key or token (redact.URLCredential). Anyone
// who may read the object would read the key. It names the credential's
// place, never its value.
func noCredential(raw, from, object string) error {
	if what := redact.URLCredential(raw); what != "" {
		return badf("%s: the URL carries a credential (%s), which would be written into the %s: put the key in a Secret (--api-key-secret) and have the profile send it (api_key_env)", from, what, object)
	}
	return nil
}

// secretRef reads --api-key-secret NAME[:KEY]. It never echoes the value:
// a key pasted there by mistake must not reach a terminal or a CI log.
func secretRef(s string, t *target) (*corev1.SecretKeySelector, error) {
	if s == "" {
		return nil, nil
	}
	if t.simulated {
		return nil, badf("--api-key-secret: the built-in simulator takes no API key")
	}
	name, key, hasKey := strings.Cut(s, ":")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, badf("--api-key-secret: NAME is not a Secret name (lower-case letters, digits, '-' and '.'); give the Secret's name, never the key itself")
	}
	if !hasKey {
		key = t.keyEnv
	}
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return nil, badf("--api-key-secret: KEY is not a key of a Secret (letters, digits, '-', '_', '.')")
	}
	return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}, nil
}
