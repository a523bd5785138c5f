package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Each parser below reads one source's answer into a partial: the facts,
// where each came from (the endpoint path and the field), and notes. It
// fails only when the answer is not the shape its engine documents; a
// field of an unexpected type is skipped with a note, so one odd field
// does not cost the rest.

// decodeJSON unmarshals raw into v, which must be a pointer to a struct.
// A field of the wrong type is skipped and noted; anything else wrong
// (not JSON, not an object) is an error.
func decodeJSON(raw []byte, v any, p *partial, ep string) error {
	err := json.Unmarshal(raw, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		p.notes = append(p.notes, fmt.Sprintf("%s: %s is a JSON %s, not the %s expected; ignored", ep, te.Field, te.Value, te.Type))
		return nil
	case errors.As(err, &te):
		return fmt.Errorf("the answer is a JSON %s, not an object", te.Value)
	}
	return fmt.Errorf("the answer is not JSON: %s", oneLine(err.Error()))
}

// modelsResponse is /v1/models with the fields vLLM and SGLang
// (max_model_len, root) and llama.cpp (meta) add.
type modelsResponse struct {
	Data *[]modelEntry `json:"data"`
}

type modelEntry struct {
	ID          string `json:"id"`
	OwnedBy     string `json:"owned_by"`
	Root        string `json:"root"`
	MaxModelLen int    `json:"max_model_len"`
	Meta        *struct {
		NParams   float64 `json:"n_params"`
		NCtxTrain int     `json:"n_ctx_train"`
		NVocab    int     `json:"n_vocab"`
		Size      int64   `json:"size"`
	} `json:"meta"`
}

// ownedByEngine maps /v1/models owned_by to an engine name. (Ollama's
// owned_by is the model's namespace, "library" for most: no engine.)
var ownedByEngine = map[string]string{
	"vllm": SourceVLLM, "llamacpp": SourceLlamaCpp, "sglang": SourceSGLang, "sixpin-sim": "sixpin-sim",
}

// parseModels reads /v1/models: every listed id, and the facts of the
// target's entry (or of the only entry).
func (r *Client) parseModels(p *partial, raw []byte, ep string) error {
	var m modelsResponse
	if err := decodeJSON(raw, &m, p, ep); err != nil {
		return err
	}
	if m.Data == nil {
		return errors.New(`the answer has no "data" list`)
	}
	data := slices.DeleteFunc(*m.Data, func(e modelEntry) bool { return e.ID == "" })
	found := false
	for _, e := range data {
		p.ids = append(p.ids, e.ID)
		if e.ID != r.target.Model && len(data) > 1 {
			continue
		}
		found = true
		f := &p.info
		f.Model.ID = e.ID
		p.set("model.id", ep+" id")
		if e.Root != "" && e.Root != e.ID {
			f.Model.Path = e.Root
			p.set("model.path", ep+" root")
		}
		if e.MaxModelLen > 0 {
			f.KV.MaxModelLen = e.MaxModelLen
			p.set("kv_cache.max_model_len", ep+" max_model_len")
		}
		if mt := e.Meta; mt != nil {
			if mt.NParams > 0 {
				f.Model.ParamsB = mt.NParams / 1e9
				p.set("model.params_b", ep+" meta.n_params")
			}
			if mt.NCtxTrain > 0 {
				f.Model.ContextTrain = mt.NCtxTrain
				p.set("model.context_train", ep+" meta.n_ctx_train")
			}
			if mt.NVocab > 0 {
				f.Model.VocabSize = mt.NVocab
				p.set("model.vocab_size", ep+" meta.n_vocab")
			}
			if mt.Size > 0 {
				f.Model.SizeBytes = mt.Size
				p.set("model.size_bytes", ep+" meta.size")
			}
		}
		if eng := ownedByEngine[e.OwnedBy]; eng != "" {
			p.engine = eng
		}
	}
	if !found && len(data) > 1 {
		p.notes = append(p.notes, fmt.Sprintf("%s lists %d models but not %q: no model facts taken from it", ep, len(data), r.target.Model))
	}
	return nil
}

// vLLM metric names discovery reads, and the simulator's own info metric
// beside them (sim.SchedulerConfigInfo).
const (
	vllmCacheConfig = "vllm:cache_config_info"
	vllmRunning     = "vllm:num_requests_running"
	vllmWaiting     = "vllm:num_requests_waiting"
	simScheduler    = "sixpin_sim:scheduler_config_info"
)

// batchingContinuous is KVFacts.Batching for an engine whose scheduler
// only batches continuously.
const batchingContinuous = "continuous"

// parseVLLMMetrics reads vLLM's /metrics: the cache configuration from
// the labels of vllm:cache_config_info, one sample per engine (data
// parallel ranks each have their own KV cache, so blocks and budget add
// up), and the request gauges summed over every label set.
func parseVLLMMetrics(p *partial, raw []byte, ep string) error {
	samples, bad := parseProm(raw, func(name string) bool {
		return name == vllmCacheConfig || name == vllmRunning || name == vllmWaiting || name == simScheduler
	})
	if len(samples) == 0 {
		if bad > 0 {
			return fmt.Errorf("no %s or request gauges (%d lines are not Prometheus samples)", vllmCacheConfig, bad)
		}
		return fmt.Errorf("no %s or request gauges", vllmCacheConfig)
	}
	f := &p.info
	src := ep + " " + vllmCacheConfig + " "
	var running, waiting float64
	var hasRunning, hasWaiting bool
	engines := map[string]bool{}
	var blocks, sizeTokens int
	var hasBlocks, hasSize bool
	for _, s := range samples {
		switch s.name {
		case vllmRunning:
			running += s.value
			hasRunning = true
			continue
		case vllmWaiting:
			waiting += s.value
			hasWaiting = true
			continue
		case simScheduler:
			if b := s.labels["batching"]; b != "" {
				f.KV.Batching = b
				p.set("kv_cache.batching", ep+" "+simScheduler+" batching")
			}
			continue
		}
		if engines[s.labels["engine"]] {
			continue // the same engine twice: count its cache once
		}
		first := len(engines) == 0
		engines[s.labels["engine"]] = true
		if n, ok := labelInt(s.labels, "num_gpu_blocks"); ok {
			blocks += n
			hasBlocks = true
		}
		if n, ok := labelInt(s.labels, "kv_cache_size_tokens"); ok {
			sizeTokens += n
			hasSize = true
		}
		if !first {
			continue
		}
		if n, ok := labelInt(s.labels, "block_size"); ok {
			f.KV.BlockSize = n
			p.set("kv_cache.block_size", src+"block_size")
		}
		if v, ok := labelFloat(s.labels, "gpu_memory_utilization"); ok {
			f.KV.GPUMemoryUtilization = v
			p.set("kv_cache.gpu_memory_utilization", src+"gpu_memory_utilization")
		}
		if b, ok := labelBool(s.labels, "enable_prefix_caching"); ok {
			f.KV.PrefixCaching = &b
			p.set("kv_cache.prefix_caching", src+"enable_prefix_caching")
		}
		if v := s.labels["cache_dtype"]; v != "" && v != "None" {
			f.KV.CacheDtype = v
			p.set("kv_cache.cache_dtype", src+"cache_dtype")
		}
	}
	if len(engines) > 0 {
		p.engine = SourceVLLM
		if f.KV.Batching == "" {
			f.KV.Batching = batchingContinuous
			p.set("kv_cache.batching", ep+" (vLLM: its scheduler only batches continuously)")
		}
	} else {
		p.notes = append(p.notes, fmt.Sprintf("%s has vLLM's request gauges but no %s", ep, vllmCacheConfig))
	}
	sum := ""
	if len(engines) > 1 {
		sum = fmt.Sprintf(", summed over %d engines", len(engines))
	}
	if hasBlocks {
		f.KV.NumGPUBlocks = blocks
		p.set("kv_cache.num_gpu_blocks", src+"num_gpu_blocks"+sum)
	}
	switch {
	case hasSize:
		// vLLM ≥ 0.11 states the budget; for hybrid models (sliding window,
		// Mamba) it differs from blocks × block_size.
		f.KV.BudgetTokens = sizeTokens
		p.set("kv_cache.budget_tokens", src+"kv_cache_size_tokens"+sum)
	case hasBlocks && f.KV.BlockSize > 0:
		f.KV.BudgetTokens = blocks * f.KV.BlockSize
		p.set("kv_cache.budget_tokens", src+"num_gpu_blocks × block_size"+sum)
	}
	if hasRunning {
		f.RequestsRunning = &running
		p.set("requests_running", ep+" "+vllmRunning)
	}
	if hasWaiting {
		f.RequestsWaiting = &waiting
		p.set("requests_waiting", ep+" "+vllmWaiting)
	}
	return nil
}

// labelInt reads an integer label ("None", Python's null, is absent).
func labelInt(l map[string]string, k string) (int, bool) {
	n, err := strconv.Atoi(l[k])
	return n, err == nil && n > 0
}

func labelFloat(l map[string]string, k string) (float64, bool) {
	v, err := strconv.ParseFloat(l[k], 64)
	return v, err == nil && v > 0
}

// labelBool reads a boolean label written by Python ("True", "False").
func labelBool(l map[string]string, k string) (bool, bool) {
	switch strings.ToLower(l[k]) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// propsResponse is llama.cpp's GET /props.
type propsResponse struct {
	DefaultGenerationSettings *struct {
		NCtx   int `json:"n_ctx"`
		Params *struct {
			// SpecTypes is the speculative decoding the server was
			// started with (--spec-type): "none", or the drafters'
			// names joined with commas ("draft-simple").
			SpecTypes *string `json:"speculative.types"`
		} `json:"params"`
	} `json:"default_generation_settings"`
	NCtx         int     `json:"n_ctx"`
	TotalSlots   *int    `json:"total_slots"`
	ModelPath    string  `json:"model_path"`
	ChatTemplate *string `json:"chat_template"`
	BuildInfo    string  `json:"build_info"`
}

// parseLlamaProps reads llama.cpp's /props. Its n_ctx is per slot: the
// context given with -c is shared by the --parallel slots.
func parseLlamaProps(p *partial, raw []byte, ep string) error {
	var pr propsResponse
	if err := decodeJSON(raw, &pr, p, ep); err != nil {
		return err
	}
	if pr.DefaultGenerationSettings == nil && pr.TotalSlots == nil {
		return errors.New("the answer has neither default_generation_settings nor total_slots")
	}
	p.engine = SourceLlamaCpp
	f := &p.info
	switch {
	case pr.DefaultGenerationSettings != nil && pr.DefaultGenerationSettings.NCtx > 0:
		f.KV.MaxModelLen = pr.DefaultGenerationSettings.NCtx
		p.set("kv_cache.max_model_len", ep+" default_generation_settings.n_ctx")
	case pr.NCtx > 0:
		f.KV.MaxModelLen = pr.NCtx
		p.set("kv_cache.max_model_len", ep+" n_ctx")
	}
	if g := pr.DefaultGenerationSettings; g != nil && g.Params != nil && g.Params.SpecTypes != nil && *g.Params.SpecTypes != "" {
		f.Speculative = *g.Params.SpecTypes
		p.set("speculative", ep+" default_generation_settings.params.speculative.types")
	}
	if pr.TotalSlots != nil && *pr.TotalSlots > 0 {
		f.KV.MaxNumSeqs = *pr.TotalSlots
		p.set("kv_cache.max_num_seqs", ep+" total_slots")
	}
	if pr.ModelPath != "" {
		f.Model.Path = pr.ModelPath
		p.set("model.path", ep+" model_path")
		if q := ggufQuant(pr.ModelPath); q != "" {
			f.Model.Quantization = q
			p.set("model.quantization", ep+" model_path (file name)")
		}
	}
	if pr.ChatTemplate != nil {
		has := *pr.ChatTemplate != ""
		f.Model.ChatTemplate = &has
		p.set("model.chat_template", ep+" chat_template")
	}
	if pr.BuildInfo != "" {
		f.Version = pr.BuildInfo
		p.set("version", ep+" build_info")
	}
	return nil
}

// ggufQuant finds the quantisation tag in a GGUF file name, as the files
// on Hugging Face are named ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
// "…-UD-IQ2_XXS-00001-of-00003.gguf"); "" when there is none.
func ggufQuant(path string) string {
	name := path[strings.LastIndexAny(path, `/\`)+1:]
	if strings.HasSuffix(strings.ToLower(name), ".gguf") {
		name = name[:len(name)-len(".gguf")]
	}
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' })
	for i := len(parts) - 1; i >= 0; i-- {
		if isQuantTag(parts[i]) {
			return strings.ToUpper(parts[i])
		}
	}
	return ""
}

// isQuantTag reports whether t is a GGUF quantisation type: Q4_0, Q4_K_M,
// IQ2_XXS, TQ1_0, F16, BF16, ...
func isQuantTag(t string) bool {
	u := strings.ToUpper(t)
	switch u {
	case "F16", "BF16", "F32", "FP16", "FP32", "MXFP4":
		return true
	}
	u = strings.TrimPrefix(strings.TrimPrefix(u, "I"), "T")
	if len(u) < 2 || u[0] != 'Q' || u[1] < '1' || u[1] > '8' {
		return false
	}
	if len(u) == 2 {
		return true
	}
	if u[2] != '_' {
		return false
	}
	for _, part := range strings.Split(u[3:], "_") {
		if part == "" {
			return false
		}
		for _, c := range part {
			if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return false
			}
		}
	}
	return true
}

// sglangArgs are the fields of SGLang's server arguments discovery reads;
// nil means absent or null.
type sglangArgs struct {
	ModelPath          *string  `json:"model_path"`
	ContextLength      *int     `json:"context_length"`
	Dtype              *string  `json:"dtype"`
	Quantization       *string  `json:"quantization"`
	KVCacheDtype       *string  `json:"kv_cache_dtype"`
	MemFractionStatic  *float64 `json:"mem_fraction_static"`
	MaxRunningRequests *int     `json:"max_running_requests"`
	MaxTotalNumTokens  *int     `json:"max_total_num_tokens"`
	ChunkedPrefillSize *int     `json:"chunked_prefill_size"`
	DisableRadixCache  *bool    `json:"disable_radix_cache"`
	PageSize           *int     `json:"page_size"`
}

// parseSGLangInfo reads SGLang's /get_server_info: the server arguments at
// the top level, the memory pool (max_total_num_tokens), and in newer
// versions internal_states, the scheduler's resolved arguments, which win
// (the top level may hold null where the scheduler chose a value).
func parseSGLangInfo(p *partial, raw []byte, ep string) error {
	var si struct {
		sglangArgs
		Version        *string      `json:"version"`
		InternalStates []sglangArgs `json:"internal_states"`
	}
	if err := decodeJSON(raw, &si, p, ep); err != nil {
		return err
	}
	if si.ModelPath == nil || si.MemFractionStatic == nil {
		return errors.New("the answer has no model_path and mem_fraction_static")
	}
	p.engine = SourceSGLang
	p.info.KV.Batching = batchingContinuous
	p.set("kv_cache.batching", ep+" (SGLang: its scheduler only batches continuously)")
	var in sglangArgs
	if len(si.InternalStates) > 0 {
		in = si.InternalStates[0]
	}
	// src names a field, at the top level or in internal_states[0].
	src := func(field string, resolved bool) string {
		if resolved {
			return ep + " internal_states[0]." + field
		}
		return ep + " " + field
	}
	f := &p.info
	if v, r := pick(in.ModelPath, si.ModelPath); v != nil && *v != "" {
		f.Model.Path = *v
		p.set("model.path", src("model_path", r))
	}
	if v, r := pick(in.ContextLength, si.ContextLength); v != nil && *v > 0 {
		f.KV.MaxModelLen = *v
		p.set("kv_cache.max_model_len", src("context_length", r))
	}
	if v, r := pick(in.Dtype, si.Dtype); v != nil && *v != "" {
		f.Model.Dtype = *v
		p.set("model.dtype", src("dtype", r))
	}
	if v, r := pick(in.Quantization, si.Quantization); v != nil && *v != "" {
		f.Model.Quantization = *v
		p.set("model.quantization", src("quantization", r))
	}
	if v, r := pick(in.KVCacheDtype, si.KVCacheDtype); v != nil && *v != "" {
		f.KV.CacheDtype = *v
		p.set("kv_cache.cache_dtype", src("kv_cache_dtype", r))
	}
	if v, r := pick(in.MemFractionStatic, si.MemFractionStatic); v != nil && *v > 0 {
		f.KV.GPUMemoryUtilization = *v
		p.set("kv_cache.gpu_memory_utilization", src("mem_fraction_static", r))
	}
	if v, r := pick(in.MaxRunningRequests, si.MaxRunningRequests); v != nil && *v > 0 {
		f.KV.MaxNumSeqs = *v
		p.set("kv_cache.max_num_seqs", src("max_running_requests", r))
	}
	// The top level's max_total_num_tokens is the memory pool itself, as
	// the scheduler reported it: it wins over internal_states.
	if v, top := pick(si.MaxTotalNumTokens, in.MaxTotalNumTokens); v != nil && *v > 0 {
		f.KV.BudgetTokens = *v
		p.set("kv_cache.budget_tokens", src("max_total_num_tokens", !top))
	}
	if v, r := pick(in.ChunkedPrefillSize, si.ChunkedPrefillSize); v != nil && *v > 0 {
		f.KV.ChunkedPrefillTokens = *v
		p.set("kv_cache.chunked_prefill_tokens", src("chunked_prefill_size", r))
	}
	if v, r := pick(in.DisableRadixCache, si.DisableRadixCache); v != nil {
		on := !*v
		f.KV.PrefixCaching = &on
		p.set("kv_cache.prefix_caching", src("disable_radix_cache", r)+" (radix cache)")
	}
	if v, r := pick(in.PageSize, si.PageSize); v != nil && *v > 0 {
		f.KV.BlockSize = *v
		p.set("kv_cache.block_size", src("page_size", r))
	}
	if si.Version != nil && *si.Version != "" {
		f.Version = *si.Version
		p.set("version", ep+" version")
	}
	return nil
}

// pick returns first if it is set, else second; resolved says first was
// taken.
func pick[T any](first, second *T) (v *T, resolved bool) {
	if first != nil {
		return first, true
	}
	return second, false
}

// ollamaShowBody is the body of Ollama's POST /api/show for model.
func ollamaShowBody(model string) []byte {
	b, _ := json.Marshal(struct {
		Model string `json:"model"`
	}{model})
	return b
}

// ollamaShow is Ollama's /api/show answer.
type ollamaShow struct {
	Parameters *string `json:"parameters"`
	Template   *string `json:"template"`
	Details    *struct {
		Format            string `json:"format"`
		Family            string `json:"family"`
		ParameterSize     string `json:"parameter_size"`
		QuantizationLevel string `json:"quantization_level"`
	} `json:"details"`
	ModelInfo map[string]json.RawMessage `json:"model_info"`
}

// parseOllamaShow reads Ollama's /api/show for the target model. The
// served context is num_ctx when the Modelfile sets it; otherwise it is
// the server's default, which Ollama does not report here.
func parseOllamaShow(p *partial, raw []byte, ep string) error {
	var sh ollamaShow
	if err := decodeJSON(raw, &sh, p, ep); err != nil {
		return err
	}
	if sh.Details == nil && sh.ModelInfo == nil {
		return errors.New("the answer has neither details nor model_info")
	}
	p.engine = SourceOllama
	f := &p.info
	var arch string
	_ = json.Unmarshal(sh.ModelInfo["general.architecture"], &arch)
	if n, ok := infoNumber(sh.ModelInfo, "general.parameter_count"); ok && n > 0 {
		f.Model.ParamsB = n / 1e9
		p.set("model.params_b", ep+" model_info.general.parameter_count")
	} else if sh.Details != nil {
		if b, ok := parseParamSize(sh.Details.ParameterSize); ok {
			f.Model.ParamsB = b
			p.set("model.params_b", ep+" details.parameter_size")
		}
	}
	if arch != "" {
		if n, ok := infoNumber(sh.ModelInfo, arch+".context_length"); ok && n > 0 {
			f.Model.ContextTrain = int(n)
			p.set("model.context_train", ep+" model_info."+arch+".context_length")
		}
		if n, ok := infoNumber(sh.ModelInfo, arch+".vocab_size"); ok && n > 0 {
			f.Model.VocabSize = int(n)
			p.set("model.vocab_size", ep+" model_info."+arch+".vocab_size")
		}
	}
	if sh.Details != nil && sh.Details.QuantizationLevel != "" {
		f.Model.Quantization = sh.Details.QuantizationLevel
		p.set("model.quantization", ep+" details.quantization_level")
	}
	if sh.Template != nil {
		has := *sh.Template != ""
		f.Model.ChatTemplate = &has
		p.set("model.chat_template", ep+" template")
	}
	if sh.Parameters != nil {
		for _, line := range strings.Split(*sh.Parameters, "\n") {
			if fl := strings.Fields(line); len(fl) == 2 && fl[0] == "num_ctx" {
				if n, err := strconv.Atoi(fl[1]); err == nil && n > 0 {
					f.KV.MaxModelLen = n
					p.set("kv_cache.max_model_len", ep+" parameters num_ctx")
				}
			}
		}
	}
	if f.KV.MaxModelLen == 0 {
		p.notes = append(p.notes, ep+": no num_ctx in the model's parameters, so Ollama serves its default context (OLLAMA_CONTEXT_LENGTH), which it does not report")
	}
	return nil
}

// infoNumber reads a number from Ollama's model_info.
func infoNumber(info map[string]json.RawMessage, key string) (float64, bool) {
	var n float64
	if err := json.Unmarshal(info[key], &n); err != nil {
		return 0, false
	}
	return n, true
}

// parseParamSize reads Ollama's parameter_size ("8.0B", "494.03M") as
// billions.
func parseParamSize(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		return 0, false
	}
	scale := map[byte]float64{'K': 1e-6, 'M': 1e-3, 'B': 1, 'T': 1e3}[s[len(s)-1]&^0x20]
	if scale == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v * scale, true
}
