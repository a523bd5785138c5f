package endpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sixpin/sixpin/record"
)

// Discovery sources: what Discover asks, by name. Each is one request to
// one engine's own endpoint; on another engine it is a quiet 404.
const (
	// SourceModels is GET {base}/models: the OpenAI model list, with
	// vLLM's and SGLang's max_model_len and llama.cpp's meta.
	SourceModels = "models"
	// SourceVLLM is GET {host}/metrics: vLLM's Prometheus metrics, read
	// for vllm:cache_config_info and the request gauges.
	SourceVLLM = "vllm"
	// SourceLlamaCpp is GET {host}/props: llama.cpp's server properties.
	SourceLlamaCpp = "llama.cpp"
	// SourceSGLang is GET {host}/get_server_info: SGLang's server
	// arguments and memory pool.
	SourceSGLang = "sglang"
	// SourceOllama is POST {host}/api/show: Ollama's model details.
	SourceOllama = "ollama"
)

// Sources returns every discovery source, in the order their facts are
// merged: when two sources report the same fact, the earlier one's value
// is kept (and the disagreement noted).
func Sources() []string {
	return []string{SourceModels, SourceVLLM, SourceSGLang, SourceLlamaCpp, SourceOllama}
}

// DefaultDiscoverTimeout bounds each discovery request, from connection to
// last byte. Sources are asked concurrently, so it also bounds Discover.
const DefaultDiscoverTimeout = 5 * time.Second

// maxDiscoveryBody bounds a discovery response body; vLLM's /metrics with
// all its histograms is a few hundred KB.
const maxDiscoveryBody = 4 << 20

// partial is what one source learnt: facts with their origins, and for
// SourceModels the listed ids.
type partial struct {
	info   record.Discovery
	ids    []string
	engine string // the engine this answer reveals, if any
	notes  []string
}

// set records where the fact at key came from.
func (p *partial) set(key, from string) {
	if p.info.From == nil {
		p.info.From = map[string]string{}
	}
	p.info.From[key] = from
}

// Discover asks the endpoint what it serves and how: the observed side of
// pins 1 (model) and 5 (KV cache). It asks every source in Sources()
// concurrently, each bounded by DefaultDiscoverTimeout, and never fails:
// a source's error is recorded in record.Discovery.Sources, and the pins it
// would have verified stay unverifiable. See DiscoverFrom.
func Discover(ctx context.Context, c *Client) record.Discovery {
	return DiscoverFrom(ctx, c, Sources()...)
}

// DiscoverFrom is Discover asking only the named sources, whose facts
// merge in the order given (unknown names are recorded as failed
// sources). {host} is the target's BaseURL less a trailing /v1: vLLM,
// llama.cpp, SGLang and Ollama serve their own endpoints at the server
// root.
//
// The Discovery carries the model ids /v1/models lists (Err is its
// failure, if any), the served context length and the parameter count;
// its Source names where MaxModelLen came from.
func DiscoverFrom(ctx context.Context, r *Client, sources ...string) record.Discovery {
	parts := make([]partial, len(sources))
	res := make([]record.SourceResult, len(sources))
	var wg sync.WaitGroup
	for i, name := range sources {
		wg.Go(func() { parts[i], res[i] = r.ask(ctx, name) })
	}
	wg.Wait()

	info := record.Discovery{Sources: res}
	var ownedBy string   // the engine /v1/models names
	var engines []string // the engines whose own endpoints answered
	for i, name := range sources {
		if name == SourceModels {
			info.ModelIDs = parts[i].ids
			if !res[i].OK {
				info.Err = res[i].Err
			}
		}
		if !res[i].OK {
			continue
		}
		merge(&info, &parts[i])
		switch e := parts[i].engine; {
		case e == "":
		case name == SourceModels:
			ownedBy = e
		case !slices.Contains(engines, e):
			engines = append(engines, e)
		}
	}
	switch {
	case ownedBy != "":
		info.Engine = ownedBy
	case len(engines) == 1:
		info.Engine = engines[0]
	case len(engines) > 1:
		info.Notes = append(info.Notes, fmt.Sprintf("the server answers as several engines (%s)", strings.Join(engines, ", ")))
	}
	return info
}

// ask queries one source and parses its answer.
func (r *Client) ask(ctx context.Context, name string) (partial, record.SourceResult) {
	var p partial
	res := record.SourceResult{Name: name}
	var method, u string
	var body []byte
	var parse func(*partial, []byte, string) error
	switch name {
	case SourceModels:
		method, u, parse = http.MethodGet, r.ep.api("/models"), r.parseModels
	case SourceVLLM:
		method, u, parse = http.MethodGet, r.ep.root("/metrics"), parseVLLMMetrics
	case SourceLlamaCpp:
		method, u, parse = http.MethodGet, r.ep.root("/props"), parseLlamaProps
	case SourceSGLang:
		method, u, parse = http.MethodGet, r.ep.root("/get_server_info"), parseSGLangInfo
	case SourceOllama:
		method, u, parse = http.MethodPost, r.ep.root("/api/show"), parseOllamaShow
		body = ollamaShowBody(r.target.Model)
	default:
		res.Err = "unknown discovery source"
		return p, res
	}
	ep := u
	if pu, err := url.Parse(u); err == nil {
		ep = pu.EscapedPath() // the query may hold a secret
	}
	res.Endpoint = method + " " + ep

	ctx, cancel := context.WithTimeout(ctx, DefaultDiscoverTimeout)
	defer cancel()
	status, raw, err := r.fetch(ctx, method, u, body)
	res.Status = status
	switch {
	case err != nil:
		res.Err = r.redact(err.Error())
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		res.Err = fmt.Sprintf("not served (HTTP %d)", status)
	case status != http.StatusOK:
		res.Err = fmt.Sprintf("HTTP %d", status)
	default:
		if err := parse(&p, raw, ep); err != nil {
			res.Err = r.redact(err.Error())
		} else {
			res.OK = true
		}
	}
	if res.Err != "" && name == SourceModels {
		res.Err = res.Endpoint + ": " + res.Err
	}
	return p, res
}

// fetch makes one discovery request with the target's credentials and
// headers, reading at most maxDiscoveryBody bytes of the answer, which it
// returns with the target's secrets redacted: whatever discovery reports
// of it (model ids, paths, notes) is clean.
func (r *Client) fetch(ctx context.Context, method, u string, body []byte) (int, []byte, error) {
	return r.fetchWith(ctx, r.httpc, method, u, body)
}

// fetchWith is fetch over hc (the scraper's own connection).
func (r *Client) fetchWith(ctx context.Context, hc *http.Client, method, u string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header = r.header.Clone()
	req.Header.Del("Accept")
	if body == nil {
		req.Header.Del("Content-Type")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBody))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, r.rd.Bytes(raw), nil
}

// merge adds a source's facts to info: a fact already known keeps its
// value, and a different value from this source is noted.
func merge(info *record.Discovery, p *partial) {
	if info.From == nil {
		info.From = map[string]string{}
	}
	info.Notes = append(info.Notes, p.notes...)
	f, from := &p.info, p.info.From
	mergeVal(info, "version", &info.Version, f.Version, from)
	mergeVal(info, "speculative", &info.Speculative, f.Speculative, from)

	mergeVal(info, "model.id", &info.Model.ID, f.Model.ID, from)
	mergeVal(info, "model.path", &info.Model.Path, f.Model.Path, from)
	mergeFloat(info, "model.params_b", &info.Model.ParamsB, f.Model.ParamsB, from)
	mergeVal(info, "model.quantization", &info.Model.Quantization, f.Model.Quantization, from)
	mergeVal(info, "model.dtype", &info.Model.Dtype, f.Model.Dtype, from)
	mergeVal(info, "model.context_train", &info.Model.ContextTrain, f.Model.ContextTrain, from)
	mergeVal(info, "model.vocab_size", &info.Model.VocabSize, f.Model.VocabSize, from)
	mergeVal(info, "model.size_bytes", &info.Model.SizeBytes, f.Model.SizeBytes, from)
	mergeBool(info, "model.chat_template", &info.Model.ChatTemplate, f.Model.ChatTemplate, from)

	mergeVal(info, "kv_cache.max_model_len", &info.KV.MaxModelLen, f.KV.MaxModelLen, from)
	mergeVal(info, "kv_cache.budget_tokens", &info.KV.BudgetTokens, f.KV.BudgetTokens, from)
	mergeVal(info, "kv_cache.block_size", &info.KV.BlockSize, f.KV.BlockSize, from)
	mergeVal(info, "kv_cache.num_gpu_blocks", &info.KV.NumGPUBlocks, f.KV.NumGPUBlocks, from)
	mergeVal(info, "kv_cache.cache_dtype", &info.KV.CacheDtype, f.KV.CacheDtype, from)
	mergeFloat(info, "kv_cache.gpu_memory_utilization", &info.KV.GPUMemoryUtilization, f.KV.GPUMemoryUtilization, from)
	mergeVal(info, "kv_cache.max_num_seqs", &info.KV.MaxNumSeqs, f.KV.MaxNumSeqs, from)
	mergeBool(info, "kv_cache.prefix_caching", &info.KV.PrefixCaching, f.KV.PrefixCaching, from)
	mergeVal(info, "kv_cache.chunked_prefill_tokens", &info.KV.ChunkedPrefillTokens, f.KV.ChunkedPrefillTokens, from)
	mergeVal(info, "kv_cache.batching", &info.KV.Batching, f.KV.Batching, from)

	if f.RequestsRunning != nil && info.RequestsRunning == nil {
		info.RequestsRunning, info.From["requests_running"] = f.RequestsRunning, from["requests_running"]
	}
	if f.RequestsWaiting != nil && info.RequestsWaiting == nil {
		info.RequestsWaiting, info.From["requests_waiting"] = f.RequestsWaiting, from["requests_waiting"]
	}
}

func mergeVal[T comparable](info *record.Discovery, key string, dst *T, v T, from map[string]string) {
	var zero T
	switch {
	case v == zero:
	case *dst == zero:
		*dst, info.From[key] = v, from[key]
	case *dst != v:
		disagree(info, key, *dst, v, from[key])
	}
}

// mergeFloat treats values within 1% as the same (a parameter count
// rounded to "8.0B" against 8,030,261,248).
func mergeFloat(info *record.Discovery, key string, dst *float64, v float64, from map[string]string) {
	switch {
	case v == 0 || math.IsNaN(v):
	case *dst == 0:
		*dst, info.From[key] = v, from[key]
	case math.Abs(*dst-v) > 0.01*math.Abs(*dst):
		disagree(info, key, *dst, v, from[key])
	}
}

func mergeBool(info *record.Discovery, key string, dst **bool, v *bool, from map[string]string) {
	switch {
	case v == nil:
	case *dst == nil:
		*dst, info.From[key] = v, from[key]
	case **dst != *v:
		disagree(info, key, **dst, *v, from[key])
	}
}

func disagree(info *record.Discovery, key string, kept, other any, otherFrom string) {
	info.Notes = append(info.Notes, fmt.Sprintf("%s: %s says %v, %s says %v; kept the first",
		key, info.From[key], kept, otherFrom, other))
}
