package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sixpin/sixpin/prompt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// modelsResponse is /v1/models with the fields vLLM (max_model_len) and
// llama.cpp (meta) add.
type modelsResponse struct {
	Data []struct {
		ID          string `json:"id"`
		MaxModelLen int    `json:"max_model_len"`
		Meta        *struct {
			NParams   float64 `json:"n_params"`
			NCtxTrain int     `json:"n_ctx_train"`
		} `json:"meta"`
	} `json:"data"`
}

// Discover asks the endpoint's /v1/models what it serves: the observed side
// of pins 1 (model) and 5 (context length). Failure is not an error: it is
// recorded on the Discovery, and the pins stay unverifiable.
func (r *Runner) Discover(ctx context.Context) results.Discovery {
	d := results.Discovery{Source: "/v1/models"}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	url := strings.TrimSuffix(r.target.BaseURL, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	if r.target.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.target.APIKey)
	}
	for k, v := range r.target.Headers {
		req.Header.Set(k, v)
	}
	resp, err := r.httpc.Do(req)
	if err != nil {
		d.Err = oneLine(err.Error())
		return d
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		d.Err = oneLine(err.Error())
		return d
	}
	if resp.StatusCode != http.StatusOK {
		d.Err = fmt.Sprintf("GET /models: HTTP %d", resp.StatusCode)
		return d
	}
	var m modelsResponse
	if err := json.Unmarshal(body, &m); err != nil {
		d.Err = "GET /models: " + oneLine(err.Error())
		return d
	}
	for _, e := range m.Data {
		d.ModelIDs = append(d.ModelIDs, e.ID)
		if e.ID != r.target.Model && len(m.Data) > 1 {
			continue
		}
		if e.MaxModelLen > 0 {
			d.MaxModelLen = e.MaxModelLen
		}
		if e.Meta != nil {
			d.ParamsB = e.Meta.NParams / 1e9
			if d.MaxModelLen == 0 {
				d.MaxModelLen = e.Meta.NCtxTrain
			}
		}
	}
	return d
}

// probeText is the probe prompt: one word, one token on common tokenizers.
const probeText = "hello"

// Probe measures the chat template's overhead: it sends a one-word prompt
// for one token and takes usage.prompt_tokens minus the word. On success
// the runner subtracts it from every synthesised prompt from then on (as
// WithTemplateOverhead does), so the server counts the pinned length. ok
// is false when the probe failed or the server reports no usage; msg says
// why, and the overhead stays as it was. Call it before Run.
func (r *Runner) Probe(ctx context.Context) (overhead int, ok bool, msg string) {
	if r.start.IsZero() {
		r.start = time.Now()
	}
	req := scenario.Request{Index: -1, PromptTokens: prompt.Count(probeText), OutputTokens: 1}
	rec := r.stream(ctx, req, probeText, r.since())
	switch {
	case rec.Failed():
		return 0, false, fmt.Sprintf("probe request failed (%s): %s", rec.Err, rec.ErrMsg)
	case !rec.HasUsage:
		return 0, false, "the server reports no usage, so the chat template's overhead is unknown"
	}
	r.overhead = max(rec.Usage.PromptTokens-req.PromptTokens, 0)
	return r.overhead, true, ""
}
