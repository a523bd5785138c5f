package endpoint

import (
	"crypto/x509"
	"fmt"
	"strings"
)

// Target is an endpoint: OpenAI-compatible, or Anthropic's Messages API
// (Protocol).
type Target struct {
	// BaseURL ends in /v1 (e.g. http://127.0.0.1:8080/v1).
	BaseURL string
	// Model is the id sent in every request.
	Model string
	// BaseURL may carry a query, which every request keeps
	// (…/v1?api-key=K → …/v1/chat/completions?api-key=K), and user info
	// (http://user:pass@host/v1), sent as Basic credentials when there is
	// no APIKey. Both are secrets: shown redacted (redact.URL), and
	// removed from whatever the server sends back.
	//
	// APIKey is sent as a bearer token (as x-api-key under
	// ProtocolMessages). It is never logged, printed or saved.
	APIKey string
	// Headers are added to every request.
	Headers map[string]string
	// ExtraBody members are added to every request body.
	ExtraBody map[string]any
	// MaxTokensField is "max_tokens" (default) or "max_completion_tokens".
	MaxTokensField string
	// OutputControl is how an exact output pin is enforced.
	OutputControl OutputControl
	// Protocol is the wire API spoken (chat completions by default).
	// Under ProtocolMessages APIKey goes in the x-api-key header, not as
	// a bearer token.
	Protocol Protocol
	// HTTP is the HTTP an https target is spoken over (HTTP1 by default;
	// plain http is always HTTP/1.1).
	HTTP HTTPVersion
	// RootCAs are the certificate authorities an https server's
	// certificate is checked against (nil: the system's, which
	// SSL_CERT_FILE and SSL_CERT_DIR replace).
	RootCAs *x509.CertPool
}

// HTTPVersion is the HTTP spoken to an https target.
type HTTPVersion uint8

// HTTP versions.
const (
	// HTTP1 is HTTP/1.1 over TLS, through sixpin's own transport
	// (internal/h1): a connection per stream in flight, each with its
	// own TCP flow control, as over plain http and as vLLM's benchmark
	// client and AIPerf speak it.
	HTTP1 HTTPVersion = iota
	// HTTP2 is HTTP/2 where the server offers it in ALPN (else
	// HTTP/1.1), through net/http: the streams share connections, and
	// each connection's flow-control window and its TCP stream.
	HTTP2
)

// HTTPVersions are the spellings ParseHTTPVersion takes, as profiles
// write them.
func HTTPVersions() []string { return []string{"1.1", "2"} }

// ParseHTTPVersion reads a profile's http: one of HTTPVersions() (""
// is 1.1).
func ParseHTTPVersion(s string) (HTTPVersion, error) {
	switch s {
	case "", "1.1":
		return HTTP1, nil
	case "2":
		return HTTP2, nil
	}
	return HTTP1, fmt.Errorf("must be one of %s (got %q)", strings.Join(HTTPVersions(), ", "), s)
}

// String is v as profiles and results files spell it.
func (v HTTPVersion) String() string { return HTTPVersions()[min(int(v), 1)] }

// OutputControl is how an endpoint is told not to stop before max_tokens:
// a set of controls (none, one, or both).
type OutputControl uint8

// Output controls.
const (
	// ControlIgnoreEOS sends "ignore_eos": true (vLLM, SGLang, llama.cpp).
	ControlIgnoreEOS OutputControl = 1 << iota
	// ControlMinTokens sends "min_tokens" equal to max_tokens (vLLM).
	ControlMinTokens
	// ControlNone is no control: output lengths are verified, not enforced.
	ControlNone OutputControl = 0
)

// OutputControls are the spellings ParseOutputControl takes, as profiles
// write them.
func OutputControls() []string {
	return []string{"none", "ignore_eos", "min_tokens", "ignore_eos+min_tokens"}
}

// ParseOutputControl reads a profile's output_control: one of
// OutputControls() ("" is none).
func ParseOutputControl(s string) (OutputControl, error) {
	switch s {
	case "", "none":
		return ControlNone, nil
	case "ignore_eos":
		return ControlIgnoreEOS, nil
	case "min_tokens":
		return ControlMinTokens, nil
	case "ignore_eos+min_tokens":
		return ControlIgnoreEOS | ControlMinTokens, nil
	}
	return ControlNone, fmt.Errorf("must be one of %s (got %q)", strings.Join(OutputControls(), ", "), s)
}

// String is c as profiles and results files spell it.
func (c OutputControl) String() string {
	switch c {
	case ControlNone:
		return "none"
	case ControlIgnoreEOS:
		return "ignore_eos"
	case ControlMinTokens:
		return "min_tokens"
	case ControlIgnoreEOS | ControlMinTokens:
		return "ignore_eos+min_tokens"
	}
	return fmt.Sprintf("OutputControl(%d)", uint8(c))
}

// Has reports whether c includes x.
func (c OutputControl) Has(x OutputControl) bool { return c&x == x && x != 0 }

// Protocol is the wire API a target is spoken to in.
type Protocol uint8

// Protocols.
const (
	// ProtocolChat is OpenAI chat completions, POST {base}/chat/completions.
	ProtocolChat Protocol = iota
	// ProtocolMessages is Anthropic's Messages API, POST {base}/messages.
	ProtocolMessages
	// ProtocolResponses is OpenAI's Responses API, POST {base}/responses.
	ProtocolResponses
	// ProtocolCompletions is OpenAI's legacy completions, POST
	// {base}/completions: the prompt as one text.
	ProtocolCompletions
)

// Protocols are the spellings ParseProtocol takes, as profiles write them.
func Protocols() []string { return []string{"chat", "messages", "responses", "completions"} }

// ParseProtocol reads a profile's protocol: one of Protocols() ("" is
// chat).
func ParseProtocol(s string) (Protocol, error) {
	if s == "" {
		return ProtocolChat, nil
	}
	for i, name := range Protocols() {
		if s == name {
			return Protocol(i), nil
		}
	}
	return ProtocolChat, fmt.Errorf("must be one of %s (got %q)", strings.Join(Protocols(), ", "), s)
}

// String is p as profiles and results files spell it.
func (p Protocol) String() string {
	if names := Protocols(); int(p) < len(names) {
		return names[p]
	}
	return fmt.Sprintf("Protocol(%d)", uint8(p))
}
