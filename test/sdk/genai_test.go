package sdk_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
	"google.golang.org/genai"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// The Gemini API as a client protocol, driven by Google's Go SDK
// (google.golang.org/genai) on each kind of upstream: Gemini itself (the
// pass-through lane), Claude (Messages), Chat Completions and Responses.
// One scripted model (upstreamtest.Turn) answers behind each, in that
// provider's own wire format.

const (
	// genaiThinking and genaiSignature are the scripted model's reasoning
	// on a tool call and what seals it; the signature is base64, as every
	// provider's is (the SDK decodes a thoughtSignature as bytes).
	genaiThinking  = "Two cities: two calls."
	genaiSignature = "EqQBCgIYAhIMZ2VuYWktc2RrLXRoaW5raW5nLXNpZ25hdHVyZS1mb3ItdG9sbGdhdGUtdGVzdHM="
	genaiSystem    = "Be brief."
	// genaiRateLimited in a prompt makes the scripted upstream answer 429.
	genaiRateLimited = "please-rate-limit-me"
	// genaiCounted is what every scripted upstream that counts tokens answers.
	genaiCounted = 42
)

// genaiLane is a gateway in front of one scripted upstream.
type genaiLane struct {
	name string // gemini, messages, chat or responses: the upstream's protocol
	base string // the gateway
	up   *upstreamtest.Server
}

var genaiLaneConfig = map[string]string{
	"gemini":    `{ name: up, type: gemini, base_url: %q, api_key: %q }`,
	"messages":  `{ name: up, type: anthropic, base_url: %q, api_key: %q }`,
	"chat":      `{ name: up, type: openai, base_url: "%s/v1", api_key: %q }`,
	"responses": `{ name: up, type: openai-responses, base_url: "%s/v1", api_key: %q }`,
}

var genaiUpstreamModel = map[string]string{
	"gemini": "gemini-3-pro-preview", "messages": "claude-sonnet-4-5", "chat": "gpt-4o", "responses": "gpt-5",
}

// genaiLaneNames are the upstream protocols a Gemini client is tested on.
var genaiLaneNames = []string{"gemini", "messages", "chat", "responses"}

// startGenaiLane starts a scripted upstream speaking protocol name and a
// gateway serving it as the model "scripted".
func startGenaiLane(t *testing.T, name string) genaiLane {
	t.Helper()
	up := newUpstream(t, genaiScript)
	yaml := fmt.Sprintf("providers:\n  - "+genaiLaneConfig[name]+"\nmodels:\n  - { name: scripted, targets: [ { provider: up, model: %s } ] }\n",
		up.URL, upstreamKey, genaiUpstreamModel[name])
	return genaiLane{name: name, base: gatewaytest.Start(t, yaml, masterKey), up: up}
}

// hasToolResult reports whether a request carries a function's result,
// in any of the four protocols.
func hasToolResult(r upstreamtest.Received) bool {
	for _, m := range []string{`"functionResponse"`, `"type":"tool_result"`, `"role":"tool"`, `"type":"function_call_output"`} {
		if bytes.Contains(r.Body, []byte(m)) {
			return true
		}
	}
	return false
}

// genaiScript is the scripted model: it counts tokens, is rate limited on
// demand, calls get_weather for each city a question names (with
// reasoning), answers once the results come, and greets otherwise.
func genaiScript(r upstreamtest.Received) upstreamtest.Reply {
	switch {
	case r.Header.Get("X-Goog-Api-Key") != "" && r.Header.Get("X-Goog-Api-Key") != upstreamKey,
		r.Header.Get("X-Api-Key") != "" && r.Header.Get("X-Api-Key") != upstreamKey,
		r.Header.Get("Authorization") != "" && r.Header.Get("Authorization") != "Bearer "+upstreamKey:
		return upstreamtest.ErrorReply(r, 401, "invalid upstream key")
	case strings.HasSuffix(r.Path, ":countTokens"):
		return upstreamtest.Reply{Body: []byte(fmt.Sprintf(`{"totalTokens":%d,"promptTokensDetails":[{"modality":"TEXT","tokenCount":%[1]d}]}`, genaiCounted))}
	case strings.HasSuffix(r.Path, "/messages/count_tokens"):
		return upstreamtest.Reply{Body: []byte(fmt.Sprintf(`{"input_tokens":%d}`, genaiCounted))}
	case strings.HasSuffix(r.Path, "/responses/input_tokens"):
		return upstreamtest.Reply{Body: []byte(fmt.Sprintf(`{"object":"response.input_tokens","input_tokens":%d}`, genaiCounted))}
	case bytes.Contains(r.Body, []byte(genaiRateLimited)):
		return upstreamtest.ErrorReply(r, 429, "Rate limit reached for requests")
	case bytes.Contains(r.Body, []byte("JSON please")):
		usage := upstreamtest.Usage{Input: 50, Output: 9}
		if forced := gjson.GetBytes(r.Body, "tool_choice"); forced.Get("type").Str == "tool" {
			// Claude asked for JSON through a forced tool answers with
			// the tool's input.
			return upstreamtest.Turn{Calls: []upstreamtest.Call{{ID: "toolu_01Json", Name: forced.Get("name").Str, Args: `{"city":"Paris","temp_c":21}`}}, Usage: usage}.Reply(r)
		}
		return upstreamtest.Turn{Text: []string{`{"city":"Paris",`, `"temp_c":21}`}, Usage: usage}.Reply(r)
	case hasToolResult(r):
		return upstreamtest.Turn{Text: []string{"Paris is warmer ", "than London."}, Usage: upstreamtest.Usage{Input: 300, Cached: 200, Output: 7}}.Reply(r)
	}
	var calls []upstreamtest.Call
	for _, city := range []string{"Paris", "London"} {
		if bytes.Contains(r.Body, []byte("weather in "+city)) || bytes.Contains(r.Body, []byte("and "+city)) {
			id := "toolu_01" + city
			if upstreamtest.Dialect(r) == "gemini" {
				id = "" // the Gemini API leaves a call's id out
			}
			calls = append(calls, upstreamtest.Call{ID: id, Name: "get_weather", Args: `{"city":"` + city + `"}`})
		}
	}
	if calls != nil {
		return upstreamtest.Turn{Thinking: genaiThinking, Signature: genaiSignature, Calls: calls,
			Usage: upstreamtest.Usage{Input: 120, Output: 20, Reasoning: 30}}.Reply(r)
	}
	return upstreamtest.Turn{Text: []string{"Hello ", "from the ", "scripted model."}, Usage: upstreamtest.Usage{Input: 120, Cached: 100, Output: 3}}.Reply(r)
}

// genaiTransport records what the SDK sent and can move its API key from
// the x-goog-api-key header to where another client puts it.
type genaiTransport struct {
	auth string // "", "query" (?key=) or "bearer"

	mu     sync.Mutex
	bodies [][]byte
}

func (g *genaiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		g.mu.Lock()
		g.bodies = append(g.bodies, b)
		g.mu.Unlock()
	}
	key := req.Header.Get("X-Goog-Api-Key")
	switch g.auth {
	case "query":
		req.Header.Del("X-Goog-Api-Key")
		q := req.URL.Query()
		q.Set("key", key)
		req.URL.RawQuery = q.Encode()
	case "bearer":
		req.Header.Del("X-Goog-Api-Key")
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// last returns the body of the last request the SDK sent.
func (g *genaiTransport) last(t *testing.T) []byte {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.bodies) == 0 {
		t.Fatal("the SDK sent nothing")
	}
	return g.bodies[len(g.bodies)-1]
}

// genaiClient is Google's Go SDK pointed at the gateway with key; auth
// says where the key goes (see genaiTransport).
func genaiClient(t *testing.T, base, key, auth string) (*genai.Client, *genaiTransport) {
	t.Helper()
	tr := &genaiTransport{auth: auth}
	c, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI,
		HTTPClient:  &http.Client{Transport: tr},
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: "v1beta"}})
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// genaiGenerate runs one turn whole or streamed and returns it as one
// answer: the streamed chunks' parts joined (adjacent text parts of the
// same kind merged), the last chunk's usage and finish reason.
func genaiGenerate(t *testing.T, c *genai.Client, streamed bool, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	t.Helper()
	if !streamed {
		return c.Models.GenerateContent(callContext(t), "scripted", contents, cfg)
	}
	out := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: "model"}}}}
	n := 0
	for chunk, err := range c.Models.GenerateContentStream(callContext(t), "scripted", contents, cfg) {
		if err != nil {
			return nil, err
		}
		n++
		if chunk.UsageMetadata != nil {
			out.UsageMetadata = chunk.UsageMetadata
		}
		if len(chunk.Candidates) == 0 {
			continue
		}
		cand := chunk.Candidates[0]
		if cand.FinishReason != "" {
			out.Candidates[0].FinishReason = cand.FinishReason
		}
		if cand.Content == nil {
			continue
		}
		dst := out.Candidates[0].Content
		for _, p := range cand.Content.Parts {
			if k := len(dst.Parts); k > 0 && p.Text != "" && dst.Parts[k-1].Text != "" && dst.Parts[k-1].Thought == p.Thought &&
				dst.Parts[k-1].FunctionCall == nil && len(p.ThoughtSignature) == 0 {
				dst.Parts[k-1].Text += p.Text
				continue
			}
			cp := *p
			dst.Parts = append(dst.Parts, &cp)
		}
	}
	if n == 0 {
		t.Fatal("the stream had no chunk")
	}
	return out, nil
}

func userContent(text string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
}

// genaiAPIError unwraps the SDK's error for a status.
func genaiAPIError(t *testing.T, err error, code int, status string) {
	t.Helper()
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("got %v (%T), want a genai.APIError %d", err, err, code)
	}
	if apiErr.Code != code || apiErr.Status != status || apiErr.Message == "" {
		t.Errorf("got APIError %d %s %q, want %d %s with a message", apiErr.Code, apiErr.Status, apiErr.Message, code, status)
	}
}

// assertGenaiUsage checks the usage a Gemini client sees: the prompt with
// its cached part, and every output token (Gemini counts reasoning apart,
// the OpenAI protocols inside the output).
func assertGenaiUsage(t *testing.T, got *genai.GenerateContentResponseUsageMetadata, want upstreamtest.Usage) {
	t.Helper()
	if got == nil {
		t.Fatal("no usageMetadata")
	}
	if int(got.PromptTokenCount) != want.Input || int(got.CachedContentTokenCount) != want.Cached ||
		int(got.CandidatesTokenCount+got.ThoughtsTokenCount) != want.Output+want.Reasoning {
		t.Errorf("usage: prompt %d cached %d candidates %d thoughts %d, want prompt %d cached %d output %d",
			got.PromptTokenCount, got.CachedContentTokenCount, got.CandidatesTokenCount, got.ThoughtsTokenCount, want.Input, want.Cached, want.Output+want.Reasoning)
	}
}

// upstreamPath is where the lane's upstream must be asked.
func (l genaiLane) upstreamPath(streamed bool) string {
	switch l.name {
	case "gemini":
		if streamed {
			return "/v1beta/models/gemini-3-pro-preview:streamGenerateContent"
		}
		return "/v1beta/models/gemini-3-pro-preview:generateContent"
	case "messages":
		return "/v1/messages"
	case "chat":
		return "/v1/chat/completions"
	}
	return "/v1/responses"
}

// TestGenAIText: a prompt with a system instruction and generation
// settings, whole and streamed: the text, finish reason and usage (cached
// tokens included) come back; each upstream got the settings in its own
// terms, and Gemini the client's bytes unchanged.
func TestGenAIText(t *testing.T) {
	t.Parallel()
	for _, name := range genaiLaneNames {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", name, streamed), func(t *testing.T) {
				l := startGenaiLane(t, name)
				c, tr := genaiClient(t, l.base, masterKey, "")
				cfg := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(genaiSystem, genai.RoleUser),
					Temperature: genai.Ptr[float32](0.25), TopP: genai.Ptr[float32](0.5), MaxOutputTokens: 256}
				if l.name != "responses" { // Responses has no stop sequences
					cfg.StopSequences = []string{"END"}
				}
				resp, err := genaiGenerate(t, c, streamed, userContent("Say hello"), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Text(); got != "Hello from the scripted model." {
					t.Errorf("text %q", got)
				}
				if fr := resp.Candidates[0].FinishReason; fr != genai.FinishReasonStop {
					t.Errorf("finish reason %q, want STOP", fr)
				}
				assertGenaiUsage(t, resp.UsageMetadata, upstreamtest.Usage{Input: 120, Cached: 100, Output: 3})
				rec := onlyRequest(t, l.up)
				assertNoClientKey(t, rec)
				if rec.Path != l.upstreamPath(streamed) || upstreamtest.Streamed(rec) != streamed {
					t.Errorf("upstream asked at %s (streamed %v)", rec.Path, upstreamtest.Streamed(rec))
				}
				body := gjson.ParseBytes(rec.Body)
				check := func(what string, ok bool) {
					if !ok {
						t.Errorf("upstream body: %s wrong: %s", what, rec.Body)
					}
				}
				switch l.name {
				case "gemini":
					if !bytes.Equal(rec.Body, tr.last(t)) {
						t.Errorf("Gemini got other bytes than the client sent:\n got: %s\nwant: %s", rec.Body, tr.last(t))
					}
					if rec.Header.Get("X-Goog-Api-Key") != upstreamKey {
						t.Errorf("Gemini got key %q", rec.Header.Get("X-Goog-Api-Key"))
					}
				case "messages":
					check("model", body.Get("model").Str == "claude-sonnet-4-5")
					check("system", strings.Contains(body.Get("system").Raw, genaiSystem))
					check("max_tokens", body.Get("max_tokens").Int() == 256)
					check("temperature", body.Get("temperature").Float() == 0.25)
					check("stop_sequences", body.Get("stop_sequences").Raw == `["END"]`)
					check("messages", body.Get("messages.#").Int() == 1 && strings.Contains(body.Get("messages.0.content").Raw, "Say hello"))
				case "chat":
					check("model", body.Get("model").Str == "gpt-4o")
					first := body.Get("messages.0")
					check("system message", (first.Get("role").Str == "system" || first.Get("role").Str == "developer") && strings.Contains(first.Get("content").Raw, genaiSystem))
					check("max tokens", body.Get("max_completion_tokens").Int() == 256 || body.Get("max_tokens").Int() == 256)
					check("temperature", body.Get("temperature").Float() == 0.25)
					check("top_p", body.Get("top_p").Float() == 0.5)
					check("stop", body.Get("stop").Raw == `["END"]` || body.Get("stop").Str == "END")
					if streamed {
						check("stream_options.include_usage", body.Get("stream_options.include_usage").Bool())
					}
				case "responses":
					check("model", body.Get("model").Str == "gpt-5")
					check("instructions", body.Get("instructions").Str == genaiSystem || strings.Contains(body.Get("input.0").Raw, genaiSystem))
					check("max_output_tokens", body.Get("max_output_tokens").Int() == 256)
					check("temperature", body.Get("temperature").Float() == 0.25)
					check("top_p", body.Get("top_p").Float() == 0.5)
				}
			})
		}
	}
}

// TestGenAIStreamJSONArray: streamGenerateContent without alt=sse answers
// a JSON array of chunks, as Google does (the SDKs use SSE; curl and older
// clients do not).
func TestGenAIStreamJSONArray(t *testing.T) {
	t.Parallel()
	for _, name := range genaiLaneNames {
		t.Run(name, func(t *testing.T) {
			l := startGenaiLane(t, name)
			req, _ := http.NewRequestWithContext(callContext(t), "POST", l.base+"/v1beta/models/scripted:streamGenerateContent",
				strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"Say hello"}]}]}`))
			req.Header.Set("x-goog-api-key", masterKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			var chunks []genai.GenerateContentResponse
			if err := json.Unmarshal(b, &chunks); err != nil {
				t.Fatalf("not a JSON array of chunks: %v: %s", err, b)
			}
			var text strings.Builder
			for _, c := range chunks {
				for _, cand := range c.Candidates {
					if cand.Content != nil {
						for _, p := range cand.Content.Parts {
							text.WriteString(p.Text)
						}
					}
				}
			}
			if text.String() != "Hello from the scripted model." || chunks[len(chunks)-1].UsageMetadata == nil ||
				chunks[len(chunks)-1].UsageMetadata.PromptTokenCount != 120 {
				t.Errorf("chunks: %s", b)
			}
		})
	}
}

// TestGenAIJSONSchema: structured output, with a responseSchema (OpenAPI
// subset, upper-case types) and with a responseJsonSchema written as the
// Gemini CLI writes it (upper-case types too): each upstream is asked
// for JSON matching the schema in its own terms.
func TestGenAIJSONSchema(t *testing.T) {
	t.Parallel()
	schema := &genai.Schema{Type: genai.TypeObject, Required: []string{"city", "temp_c"},
		Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}, "temp_c": {Type: genai.TypeInteger}}}
	jsonSchema := map[string]any{"type": "OBJECT", "required": []string{"city", "temp_c"},
		"properties": map[string]any{"city": map[string]any{"type": "STRING"}, "temp_c": map[string]any{"type": "INTEGER"}}}
	for _, name := range genaiLaneNames {
		for _, kind := range []string{"responseSchema", "responseJsonSchema"} {
			t.Run(name+"/"+kind, func(t *testing.T) {
				l := startGenaiLane(t, name)
				c, tr := genaiClient(t, l.base, masterKey, "")
				cfg := &genai.GenerateContentConfig{ResponseMIMEType: "application/json"}
				if kind == "responseSchema" {
					cfg.ResponseSchema = schema
				} else {
					cfg.ResponseJsonSchema = jsonSchema
				}
				resp, err := c.Models.GenerateContent(callContext(t), "scripted", userContent("JSON please: the weather in a city"), cfg)
				if err != nil {
					t.Fatal(err)
				}
				var out struct {
					City  string `json:"city"`
					TempC int    `json:"temp_c"`
				}
				if err := json.Unmarshal([]byte(resp.Text()), &out); err != nil || out.City != "Paris" || out.TempC != 21 {
					t.Errorf("answer %q: %v", resp.Text(), err)
				}
				rec := onlyRequest(t, l.up)
				body := gjson.ParseBytes(rec.Body)
				var got gjson.Result
				switch l.name {
				case "gemini":
					if !bytes.Equal(rec.Body, tr.last(t)) {
						t.Errorf("Gemini got other bytes than the client sent:\n got: %s\nwant: %s", rec.Body, tr.last(t))
					}
					return
				case "messages":
					// Structured output, or a forced tool whose input is the answer.
					got = body.Get("output_config.format")
					if name := body.Get("tool_choice.name").Str; body.Get("tool_choice.type").Str == "tool" {
						for _, tool := range body.Get("tools").Array() {
							if tool.Get("name").Str == name {
								got = gjson.Parse(`{"type":"json_schema","schema":` + tool.Get("input_schema").Raw + `}`)
							}
						}
					}
				case "chat":
					got = body.Get("response_format")
					if got.Get("type").Str == "json_schema" {
						got = got.Get("json_schema")
						got = gjson.Parse(`{"type":"json_schema","schema":` + got.Get("schema").Raw + `}`)
					}
				case "responses":
					got = body.Get("text.format")
				}
				// JSON Schema spells types in lower case: the upper-case
				// Gemini spelling must not reach a provider that checks it.
				if got.Get("type").Str != "json_schema" || got.Get("schema.type").Str != "object" ||
					got.Get("schema.properties.city.type").Str != "string" || got.Get("schema.properties.temp_c.type").Str != "integer" {
					t.Errorf("upstream was not asked for the schema: %s", rec.Body)
				}
			})
		}
	}
}

var genaiWeatherTool = &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather", Description: "Weather for a city",
	Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}, Required: []string{"city"}}}}}

// TestGenAIToolLoop: a question that makes the model call a function once
// or twice in parallel, thinking first, whole and streamed; the client
// runs the calls and sends the model turn back as it got it with the
// results, keeping the call ids or dropping them (Gemini API clients may
// do either). Each upstream must get its calls paired with their results,
// Claude its thinking block byte for byte, Responses its encrypted
// reasoning, Gemini its thought signature.
func TestGenAIToolLoop(t *testing.T) {
	t.Parallel()
	for _, name := range genaiLaneNames {
		for _, tc := range []struct {
			cities   []string
			streamed bool
			keepIDs  bool
		}{
			{[]string{"Paris"}, false, true},
			{[]string{"Paris", "London"}, false, true},
			{[]string{"Paris", "London"}, true, true},
			{[]string{"Paris", "London"}, false, false},
			{[]string{"Paris", "London"}, true, false},
		} {
			t.Run(fmt.Sprintf("%s/%dcalls/stream=%v/ids=%v", name, len(tc.cities), tc.streamed, tc.keepIDs), func(t *testing.T) {
				l := startGenaiLane(t, name)
				c, _ := genaiClient(t, l.base, masterKey, "")
				question := "What is the weather in " + strings.Join(tc.cities, " and ") + "?"
				cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{genaiWeatherTool},
					ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](1024)}}
				first, err := genaiGenerate(t, c, tc.streamed, userContent(question), cfg)
				if err != nil {
					t.Fatal(err)
				}
				calls := first.FunctionCalls()
				if len(calls) != len(tc.cities) {
					t.Fatalf("got %d function calls, want %d: %+v", len(calls), len(tc.cities), first.Candidates[0].Content.Parts)
				}
				for i, call := range calls {
					if call.Name != "get_weather" || call.Args["city"] != tc.cities[i] {
						t.Errorf("call %d: %s(%v), want get_weather(%s)", i, call.Name, call.Args, tc.cities[i])
					}
				}
				if fr := first.Candidates[0].FinishReason; fr != genai.FinishReasonStop {
					t.Errorf("finish reason %q, want STOP (Gemini ends a turn of calls with STOP)", fr)
				}
				assertGenaiUsage(t, first.UsageMetadata, upstreamtest.Usage{Input: 120, Output: 20, Reasoning: 30})
				var thought string
				signed := 0
				for _, p := range first.Candidates[0].Content.Parts {
					if p.Thought {
						thought += p.Text
					}
					if len(p.ThoughtSignature) > 0 {
						signed++
					}
				}
				if l.name != "chat" { // Chat Completions has no reasoning to give
					if thought != genaiThinking {
						t.Errorf("thought %q, want %q", thought, genaiThinking)
					}
					if signed == 0 {
						t.Errorf("no part carries a thoughtSignature: %+v", first.Candidates[0].Content.Parts)
					}
				}
				if l.name == "gemini" {
					var sig []byte
					for _, p := range first.Candidates[0].Content.Parts {
						if p.FunctionCall != nil && len(p.ThoughtSignature) > 0 && sig == nil {
							sig = p.ThoughtSignature
						}
					}
					if base64.StdEncoding.EncodeToString(sig) != genaiSignature {
						t.Errorf("first call's signature %q, want Gemini's own", base64.StdEncoding.EncodeToString(sig))
					}
				}

				// The client's next turn: the model turn as it came, then
				// one result per call.
				model := first.Candidates[0].Content
				var results []*genai.Part
				for _, call := range calls {
					id := call.ID
					if !tc.keepIDs {
						id = ""
						for _, p := range model.Parts {
							if p.FunctionCall != nil {
								p.FunctionCall.ID = ""
							}
						}
					}
					results = append(results, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: call.Name,
						Response: map[string]any{"output": fmt.Sprintf("%v: 21C", call.Args["city"])}}})
				}
				history := append(userContent(question), model, genai.NewContentFromParts(results, genai.RoleUser))
				final, err := genaiGenerate(t, c, tc.streamed, history, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if got := final.Text(); got != "Paris is warmer than London." {
					t.Errorf("final text %q", got)
				}
				assertGenaiUsage(t, final.UsageMetadata, upstreamtest.Usage{Input: 300, Cached: 200, Output: 7})

				reqs := l.up.Requests()
				if len(reqs) != 2 {
					t.Fatalf("upstream received %d requests, want 2", len(reqs))
				}
				second := reqs[1].Body
				checkGenaiSecondTurn(t, l.name, calls, tc.cities, tc.keepIDs, second)
			})
		}
	}
}

// checkGenaiSecondTurn checks the upstream request that carries the
// results: each call paired with its own result, and the reasoning back.
func checkGenaiSecondTurn(t *testing.T, lane string, calls []*genai.FunctionCall, cities []string, keptIDs bool, second []byte) {
	t.Helper()
	body := gjson.ParseBytes(second)
	type pair struct{ callID, resultID, args, result string }
	var pairs []pair
	switch lane {
	case "gemini":
		// Gemini pairs by order; the signature must be on the first call.
		if !bytes.Contains(second, []byte(`"thoughtSignature":"`+genaiSignature+`"`)) {
			t.Errorf("Gemini did not get its signature back: %s", second)
		}
		var fcs, frs []gjson.Result
		for _, c := range body.Get("contents").Array() {
			for _, p := range c.Get("parts").Array() {
				if p.Get("functionCall").Exists() {
					fcs = append(fcs, p.Get("functionCall"))
				}
				if p.Get("functionResponse").Exists() {
					frs = append(frs, p.Get("functionResponse"))
				}
			}
		}
		for i := range fcs {
			if i < len(frs) {
				pairs = append(pairs, pair{fcs[i].Get("id").Str, frs[i].Get("id").Str, fcs[i].Get("args").Raw, frs[i].Get("response").Raw})
			}
		}
	case "messages":
		thinking := `{"type":"thinking","thinking":"` + genaiThinking + `","signature":"` + genaiSignature + `"}`
		if !bytes.Contains(second, []byte(thinking)) {
			t.Errorf("Claude did not get its thinking block back byte for byte (%s): %s", thinking, second)
		}
		uses, results := map[string]string{}, map[string]string{}
		var order []string
		for _, m := range body.Get("messages").Array() {
			for _, b := range m.Get("content").Array() {
				switch b.Get("type").Str {
				case "tool_use":
					uses[b.Get("id").Str] = b.Get("input").Raw
					order = append(order, b.Get("id").Str)
				case "tool_result":
					results[b.Get("tool_use_id").Str] = b.Get("content").Raw
				}
			}
		}
		for _, id := range order {
			pairs = append(pairs, pair{id, id, uses[id], results[id]})
		}
		if len(results) != len(uses) {
			t.Errorf("%d tool_use, %d tool_result: %s", len(uses), len(results), second)
		}
	case "chat":
		results := map[string]string{}
		var order []string
		args := map[string]string{}
		for _, m := range body.Get("messages").Array() {
			for _, tc := range m.Get("tool_calls").Array() {
				order = append(order, tc.Get("id").Str)
				args[tc.Get("id").Str] = tc.Get("function.arguments").Str
			}
			if m.Get("role").Str == "tool" {
				results[m.Get("tool_call_id").Str] = m.Get("content").Raw
			}
		}
		for _, id := range order {
			pairs = append(pairs, pair{id, id, args[id], results[id]})
		}
	case "responses":
		if !bytes.Contains(second, []byte(`"encrypted_content":"`+genaiSignature+`"`)) {
			t.Errorf("Responses did not get its reasoning item back: %s", second)
		}
		results := map[string]string{}
		var order []string
		args := map[string]string{}
		for _, it := range body.Get("input").Array() {
			switch it.Get("type").Str {
			case "function_call":
				order = append(order, it.Get("call_id").Str)
				args[it.Get("call_id").Str] = it.Get("arguments").Str
			case "function_call_output":
				results[it.Get("call_id").Str] = it.Get("output").Raw
			}
		}
		for _, id := range order {
			pairs = append(pairs, pair{id, id, args[id], results[id]})
		}
	}
	if len(pairs) != len(cities) {
		t.Fatalf("upstream got %d calls with results, want %d: %s", len(pairs), len(cities), second)
	}
	for i, p := range pairs {
		if !strings.Contains(p.args, cities[i]) || !strings.Contains(p.result, cities[i]+": 21C") {
			t.Errorf("call %d: args %s paired with result %s, want %s's", i, p.args, p.result, cities[i])
		}
		if lane != "gemini" && p.callID == "" {
			t.Errorf("call %d has no id upstream", i)
		}
		if lane != "gemini" && keptIDs && p.callID != "toolu_01"+cities[i] {
			t.Errorf("call %d: upstream id %q, want its own %q back", i, p.callID, "toolu_01"+cities[i])
		}
	}
	if keptIDs && lane != "gemini" {
		for i, c := range calls {
			if c.ID == "" {
				t.Errorf("call %d reached the client without an id", i)
			}
		}
	}
}

// TestGenAICountTokens: countTokens is the upstream's own count where it
// has one (Gemini, Claude, Responses), and the gateway's estimate on Chat.
func TestGenAICountTokens(t *testing.T) {
	t.Parallel()
	for _, name := range genaiLaneNames {
		t.Run(name, func(t *testing.T) {
			l := startGenaiLane(t, name)
			c, _ := genaiClient(t, l.base, masterKey, "")
			n, err := c.Models.CountTokens(callContext(t), "scripted", userContent("How many tokens is this prompt?"), nil)
			if err != nil {
				t.Fatal(err)
			}
			reqs := l.up.Requests()
			switch l.name {
			case "chat", "messages", "responses":
				// Counted locally on the translation lane, as Responses
				// clients' input_tokens are on these upstreams.
				if n.TotalTokens <= 0 || n.TotalTokens > 100 {
					t.Errorf("estimate %d", n.TotalTokens)
				}
				if len(reqs) != 0 {
					t.Errorf("a local count, yet the upstream got %s", reqs[0].Path)
				}
			default:
				if n.TotalTokens != genaiCounted {
					t.Errorf("totalTokens %d, want the upstream's %d", n.TotalTokens, genaiCounted)
				}
				if len(reqs) != 1 {
					t.Fatalf("upstream received %d requests, want 1", len(reqs))
				}
				if !strings.Contains(string(reqs[0].Body), "How many tokens") {
					t.Errorf("counted %s", reqs[0].Body)
				}
			}
		})
	}
}

// TestGenAIErrors: errors reach the SDK as its APIError, in Google's
// envelope with Google's status names.
func TestGenAIErrors(t *testing.T) {
	t.Parallel()
	for _, name := range genaiLaneNames {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", name, streamed), func(t *testing.T) {
				l := startGenaiLane(t, name)
				c, _ := genaiClient(t, l.base, masterKey, "")
				_, err := genaiGenerate(t, c, streamed, userContent(genaiRateLimited), nil)
				genaiAPIError(t, err, 429, "RESOURCE_EXHAUSTED")
				onlyRequest(t, l.up) // no retry behind the client's back

				if streamed {
					_, err = c.Models.GenerateContent(callContext(t), "no-such-model", userContent("hi"), nil)
				} else {
					_, err = c.Models.GenerateContent(callContext(t), "models/no-such-model", userContent("hi"), nil)
				}
				genaiAPIError(t, err, 404, "NOT_FOUND")

				bad, _ := genaiClient(t, l.base, "sk-tg-not-the-master-key", "")
				_, err = genaiGenerate(t, bad, streamed, userContent("hi"), nil)
				genaiAPIError(t, err, 401, "UNAUTHENTICATED")
				if n := len(l.up.Requests()); n != 1 {
					t.Errorf("upstream received %d requests, want only the rate-limited one", n)
				}
			})
		}
	}
}

// TestGenAIAuthAndModels: the key is accepted in x-goog-api-key (the
// SDKs), in ?key= (curl, older clients) and as a bearer token; a wrong
// key is refused wherever it is; models are listed and read with their
// "models/" names.
func TestGenAIAuthAndModels(t *testing.T) {
	t.Parallel()
	l := startGenaiLane(t, "gemini") // any lane: the gateway checks keys
	for _, auth := range []string{"", "query", "bearer"} {
		t.Run("auth="+auth, func(t *testing.T) {
			c, _ := genaiClient(t, l.base, masterKey, auth)
			if _, err := c.Models.GenerateContent(callContext(t), "scripted", userContent("Say hello"), nil); err != nil {
				t.Fatal(err)
			}
			bad, _ := genaiClient(t, l.base, "sk-tg-not-the-master-key", auth)
			_, err := bad.Models.GenerateContent(callContext(t), "scripted", userContent("Say hello"), nil)
			genaiAPIError(t, err, 401, "UNAUTHENTICATED")
			m, err := c.Models.Get(callContext(t), "scripted", nil)
			if err != nil || m.Name != "models/scripted" {
				t.Errorf("get: %+v %v", m, err)
			}
			var names []string
			for m, err := range c.Models.All(callContext(t)) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, m.Name)
			}
			if strings.Join(names, ",") != "models/scripted" {
				t.Errorf("listed %v", names)
			}
			_, err = c.Models.Get(callContext(t), "no-such-model", nil)
			genaiAPIError(t, err, 404, "NOT_FOUND")
		})
	}
	// The key in the query never reaches the upstream or the logs of a
	// proxy in between as part of a path the gateway builds.
	c, _ := genaiClient(t, l.base, masterKey, "query")
	if _, err := c.Models.GenerateContent(callContext(t), "scripted", userContent("Say hello"), nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range l.up.Requests() {
		if q, _ := url.ParseQuery(r.Query); q.Get("key") != "" {
			t.Errorf("upstream got the client's key in its query: %s", r.Query)
		}
		assertNoClientKey(t, r)
	}
}
