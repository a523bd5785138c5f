package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// ServerTokenizer counts tokens with the endpoint's own /tokenize, served
// at the host root by llama.cpp's llama-server ({"content": …} →
// {"tokens": […]}) and by vLLM and SGLang ({"model": …, "prompt": …} →
// {"count": N, "tokens": […]}). One request carries both shapes, with
// special tokens off (no BOS), so each server reads its own. It is safe for
// concurrent use.
type ServerTokenizer struct {
	url    string
	err    error // the base URL could not be used
	model  string
	header http.Header
	rd     redactor
	client *http.Client
}

// NewServerTokenizer returns the tokenizer of t's server. Its requests
// carry t's credentials and headers and keep the base URL's query; its
// errors are redacted of t's secrets.
func NewServerTokenizer(t Target) *ServerTokenizer {
	ep, auth, err := parseBaseURL(t.BaseURL)
	h := requestHeader(t, auth)
	h.Del("Accept")
	return &ServerTokenizer{
		url:    ep.root("/tokenize"),
		err:    err,
		model:  t.Model,
		header: h,
		rd:     newRedactor(t, auth),
		client: &http.Client{Transport: newTransport(16, new(atomic.Int64), HTTP1, t.RootCAs), Timeout: 30 * time.Second},
	}
}

type tokenizeRequest struct {
	Model            string `json:"model,omitempty"`
	Prompt           string `json:"prompt"`
	Content          string `json:"content"`
	AddSpecial       bool   `json:"add_special"`
	AddSpecialTokens bool   `json:"add_special_tokens"`
}

type tokenizeResponse struct {
	Tokens []json.RawMessage `json:"tokens"`
	Count  *int              `json:"count"`
}

// Count returns the number of tokens the server makes of text.
func (s *ServerTokenizer) Count(ctx context.Context, text string) (int, error) {
	if s.err != nil {
		return 0, fmt.Errorf("POST /tokenize: %w", s.err)
	}
	body, err := json.Marshal(tokenizeRequest{Model: s.model, Prompt: text, Content: text})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = s.header.Clone()
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("POST /tokenize: %s", oneLine(s.rd.String(err.Error())))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, fmt.Errorf("POST /tokenize: %s", oneLine(s.rd.String(err.Error())))
	}
	data = s.rd.Bytes(data)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST /tokenize: HTTP %d: %.200s", resp.StatusCode, data)
	}
	var tr tokenizeResponse
	if err := json.Unmarshal(data, &tr); err != nil {
		return 0, fmt.Errorf("POST /tokenize: %w", err)
	}
	switch {
	case tr.Count != nil:
		return *tr.Count, nil
	case tr.Tokens != nil:
		return len(tr.Tokens), nil
	}
	return 0, fmt.Errorf("POST /tokenize: no tokens in the answer: %.200s", data)
}

// Counter adapts Count for prompt.NewBuilder, bounded by ctx.
func (s *ServerTokenizer) Counter(ctx context.Context) func(string) (int, error) {
	return func(text string) (int, error) { return s.Count(ctx, text) }
}
