package translate

import (
	"context"
	"fmt"
	"maps"
	"mime"
	"path"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/api/gemini"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// A Gemini client's request is read once, the same way for every
// upstream (gReq), and then written in the upstream's protocol by its
// pair (gemini_via_*_request.go). Paths in refusals use Google's member
// names: contents[2].parts[0].functionResponse.

// gReq is a Gemini client's request, checked and read.
type gReq struct {
	system []string // systemInstruction's texts
	turns  []gTurn
	funcs  []gFunc
	server []gServer
	choice *gChoice
	gen    gGen
	labels map[string]string
}

// gTurn is one of contents: a user or a model turn.
type gTurn struct {
	model bool
	path  string
	items []gItem
}

// gKind is what a gItem is.
type gKind uint8

const (
	gText      gKind = iota // text (thoughts are left out)
	gMedia                  // inlineData or fileData
	gCall                   // functionCall
	gResult                 // functionResponse
	gReasoning              // what a thoughtSignature tollgate sealed restores
)

// gItem is one part of a turn, as the upstreams' pairs need it.
type gItem struct {
	kind gKind
	path string // contents[i].parts[j]
	text string // gText; gResult: the function's result as text
	part *gemini.Part
	// gCall, gResult: the call's id (the client's, or one made from the
	// call's place in the conversation) and the function's name.
	id, name string
	args     jsontext.Value // gCall: a JSON object
	isError  bool           // gResult: the function reported an error
	media    []gItem        // gResult: media the function returned
	sealed   sealedReasoning
}

// gFunc is a declared function; schema is JSON Schema.
type gFunc struct {
	name, description string
	schema            jsontext.Value
}

// gServer is a tool Gemini runs itself (googleSearch, codeExecution,
// urlContext…): path is tools[i].name.
type gServer struct{ name, path string }

// gChoice is functionCallingConfig: mode auto, any or none, and the
// functions calls are limited to (all when empty).
type gChoice struct {
	mode  string
	names []string
	named map[string]bool // names, to look up
}

// gGen is generationConfig, checked.
type gGen struct {
	temperature, topP   *float64
	topK, maxOut, seed  *int64
	stop                []string
	presence, frequency *float64
	// format is "" (text), "json_object" or "json_schema" with schema
	// (JSON Schema).
	format   string
	schema   jsontext.Value
	thinking gThinking
}

// gThinking is thinkingConfig: a level (effort: minimal, low, medium,
// high) or a budget; dynamic leaves the amount to the model; off turns
// thinking off. param names what was asked, for reports.
type gThinking struct {
	effort  string
	budget  int64
	dynamic bool
	off     bool
	param   string
}

// newGeminiPlan starts the plan of a Gemini client's request.
func newGeminiPlan(t Target) *Plan {
	return &Plan{AnswerModel: t.Model, Stream: t.Stream, Caps: t.Caps, policy: t.Policy, signer: t.Signer}
}

// geminiNames are the Gemini names of the members that translators
// shared with other clients report in their upstream's terms.
var geminiNames = map[string]string{
	"temperature": "generationConfig.temperature", "top_p": "generationConfig.topP", "top_k": "generationConfig.topK",
	"max_tokens": "generationConfig.maxOutputTokens",
}

// reportGeminiNames names the dropped and adjusted members as the
// client knows them.
func (p *Plan) reportGeminiNames() {
	dropped, adjusted := p.dropped, p.adjusted
	p.dropped, p.adjusted, p.listed = nil, nil, nil
	for _, n := range dropped {
		p.drop(geminiName(n))
	}
	for _, n := range adjusted {
		p.adjust(geminiName(n))
	}
}

func geminiName(n string) string {
	if g, ok := geminiNames[n]; ok {
		return g
	}
	return n
}

// geminiBodyTo decodes a Gemini client's body and translates it with f.
func geminiBodyTo[Out any](ctx context.Context, body []byte, t Target, f func(context.Context, *gemini.Request, Target) (Out, *Plan, error)) ([]byte, *Plan, error) {
	in := new(gemini.Request)
	if err := decode(body, in); err != nil {
		path, msg := jsonx.Explain(err)
		return nil, nil, &RequestError{Param: path, Message: msg}
	}
	out, p, err := f(ctx, in, t)
	if err != nil {
		return nil, nil, err
	}
	p.reportGeminiNames()
	cacheHints(out, t.Cache, p)
	b, err := jsonx.Marshal(out)
	return b, p, err
}

// readGemini checks and reads a Gemini client's request for an upstream
// (named in refusals: "an Anthropic model").
func (p *Plan) readGemini(ctx context.Context, in *gemini.Request, upstream string) (*gReq, error) {
	r := &gReq{labels: in.Labels}
	if err := p.geminiTopLevel(in, upstream); err != nil {
		return nil, err
	}
	if err := p.geminiGeneration(ctx, in.GenerationConfig, &r.gen, upstream); err != nil {
		return nil, err
	}
	if si := in.SystemInstruction; si != nil {
		for j, part := range si.Parts {
			if part.Thought {
				continue
			}
			if part.InlineData != nil || part.FileData != nil || part.FunctionCall != nil || part.FunctionResponse != nil {
				path := fmt.Sprintf("systemInstruction.parts[%d]", j)
				return nil, badRequest(path, "%s: system instructions must be text", path)
			}
			if part.Text != "" {
				r.system = append(r.system, part.Text)
			}
		}
	}
	var err error
	if r.turns, err = p.geminiTurns(ctx, in.Contents, upstream); err != nil {
		return nil, err
	}
	if r.funcs, r.server, err = p.geminiTools(ctx, in.Tools); err != nil {
		return nil, err
	}
	if r.choice, err = geminiChoice(in.ToolConfig, r.funcs, p); err != nil {
		return nil, err
	}
	return r, nil
}

// geminiTopLevel handles the request's members that are not the
// conversation, tools or generationConfig.
func (p *Plan) geminiTopLevel(in *gemini.Request, upstream string) error {
	if len(in.SafetySettings) > 0 && string(in.SafetySettings) != "null" {
		if err := p.advisory("safetySettings", "safety settings are Google's; "+upstream+" has its own policies"); err != nil {
			return err
		}
	}
	if in.CachedContent != "" {
		// The cached content is part of the prompt: without it the model
		// would answer another question.
		if err := p.contract("cachedContent", "cached content lives in Google's cache and cannot be sent to "+upstream+"; send the content itself"); err != nil {
			return err
		}
	}
	return eachMember(in.Extra, func(k string) error {
		return p.advisory(k, "unknown parameter, not translated")
	})
}

// geminiGeneration checks and reads generationConfig.
func (p *Plan) geminiGeneration(ctx context.Context, gc *gemini.GenerationConfig, g *gGen, upstream string) error {
	if gc == nil {
		return nil
	}
	const at = "generationConfig."
	if t := gc.Temperature; t != nil && (*t < 0 || *t > 2) {
		return badRequest(at+"temperature", "%stemperature: must be between 0 and 2, got %g", at, *t)
	}
	if gc.MaxOutputTokens != 0 {
		n := gc.MaxOutputTokens
		if err := positiveBound(at+"maxOutputTokens", &n); err != nil {
			return err
		}
		g.maxOut = &n
	}
	g.temperature, g.topP, g.topK, g.seed = gc.Temperature, gc.TopP, gc.TopK, gc.Seed
	g.presence, g.frequency = gc.PresencePenalty, gc.FrequencyPenalty
	g.stop = gc.StopSequences
	if gc.CandidateCount > 1 {
		if err := p.contract(at+"candidateCount", upstream+" produces one candidate per request"); err != nil {
			return err
		}
	}
	if gc.ResponseLogprobs || gc.Logprobs != nil {
		if err := p.contract(at+"responseLogprobs", "log probabilities are not translated from "+upstream); err != nil {
			return err
		}
	}
	for _, m := range gc.ResponseModalities {
		if !strings.EqualFold(m, "TEXT") && m != "MODALITY_UNSPECIFIED" {
			if err := p.contract(at+"responseModalities", fmt.Sprintf("%s answers in text only, not %s", upstream, m)); err != nil {
				return err
			}
			break
		}
	}
	if err := p.geminiFormat(ctx, gc, g); err != nil {
		return err
	}
	if err := p.geminiThinking(gc.ThinkingConfig, &g.thinking); err != nil {
		return err
	}
	return eachMember(gc.Extra, func(k string) error {
		return p.advisory(at+k, "unknown parameter, not translated")
	})
}

// geminiFormat reads the answer's format: JSON, with a schema or without.
func (p *Plan) geminiFormat(ctx context.Context, gc *gemini.GenerationConfig, g *gGen) error {
	const at = "generationConfig."
	hasSchema, hasJSONSchema := len(gc.ResponseSchema) > 0 && string(gc.ResponseSchema) != "null", len(gc.ResponseJSONSchema) > 0 && string(gc.ResponseJSONSchema) != "null"
	if hasSchema && hasJSONSchema {
		return badRequest(at+"responseJsonSchema", "%sresponseJsonSchema: give responseSchema or responseJsonSchema, not both", at)
	}
	mt, _, _ := strings.Cut(gc.ResponseMimeType, ";")
	switch mt = strings.ToLower(strings.TrimSpace(mt)); mt {
	case "", "text/plain", "application/json":
	case "text/x.enum":
		return p.contract(at+"responseMimeType", "text/x.enum answers cannot be produced by this upstream; ask for application/json with a schema")
	default:
		return badRequest(at+"responseMimeType", "%sresponseMimeType: must be text/plain or application/json, got %q", at, gc.ResponseMimeType)
	}
	var err error
	switch {
	case hasSchema:
		g.format = "json_schema"
		g.schema, err = p.jsonSchemaOf(ctx, gc.ResponseSchema, at+"responseSchema")
	case hasJSONSchema:
		g.format = "json_schema"
		g.schema, err = p.jsonSchemaOf(ctx, gc.ResponseJSONSchema, at+"responseJsonSchema")
	case mt == "application/json":
		g.format = "json_object"
	}
	return err
}

// geminiLevels are thinkingLevel's values, as efforts.
var geminiLevels = map[string]string{"MINIMAL": "minimal", "LOW": "low", "MEDIUM": "medium", "HIGH": "high"}

// geminiThinking reads thinkingConfig. includeThoughts alone asks for
// the model's own amount of thinking, as it gets on Gemini.
func (p *Plan) geminiThinking(tc *gemini.ThinkingConfig, t *gThinking) error {
	if tc == nil {
		return nil
	}
	const at = "generationConfig.thinkingConfig."
	p.geminiThoughts = tc.IncludeThoughts
	level := strings.ToUpper(tc.ThinkingLevel)
	if level == "THINKING_LEVEL_UNSPECIFIED" {
		level = ""
	}
	if level != "" && tc.ThinkingBudget != nil {
		return badRequest(at+"thinkingLevel", "%sthinkingLevel: give thinkingBudget or thinkingLevel, not both", at)
	}
	switch {
	case level != "":
		e, ok := geminiLevels[level]
		if !ok {
			return badRequest(at+"thinkingLevel", "%sthinkingLevel: must be MINIMAL, LOW, MEDIUM or HIGH, got %q", at, tc.ThinkingLevel)
		}
		t.effort, t.param = e, at+"thinkingLevel"
	case tc.ThinkingBudget != nil:
		t.param = at + "thinkingBudget"
		switch b := *tc.ThinkingBudget; {
		case b == -1:
			t.dynamic = true
		case b == 0:
			t.off = true
		case b > 0:
			t.budget, t.effort = b, budgetEffort(b)
		default:
			return badRequest(at+"thinkingBudget", "%sthinkingBudget: must be -1 (the model decides), 0 (off) or a number of tokens, got %d", at, b)
		}
	case tc.IncludeThoughts:
		t.dynamic, t.param = true, at+"includeThoughts"
	}
	return nil
}

// geminiTurns reads contents. Function calls keep the client's ids; a
// call without one gets an id made from its place in the conversation
// (call_<content>_<call>), the same on every turn of a conversation, so
// that the upstream's prompt cache holds. A function response goes with
// the call of the model turn before it that has its id, or else with
// the first call not yet answered that has its name: Gemini CLI answers
// a call that came without an id with an id of its own making.
func (p *Plan) geminiTurns(ctx context.Context, contents []gemini.Content, upstream string) ([]gTurn, error) {
	pending := pendingCalls{work: &p.work} // the calls of the last model turn
	turns := make([]gTurn, 0, len(contents))
	for i, c := range contents {
		if err := lookAtContext(ctx, &p.work); err != nil {
			return nil, err
		}
		t := gTurn{path: pathAt("", "contents", i)}
		switch c.Role {
		case gemini.RoleModel:
			t.model = true
			pending.reset()
		case gemini.RoleUser, "", "function":
		default:
			return nil, badRequest(t.path+".role", "%s.role: must be user or model, got %q", t.path, c.Role)
		}
		var seals map[string]struct{} // each restored once per turn
		calls := 0
		for j := range c.Parts {
			if err := lookAtContext(ctx, &p.work); err != nil {
				return nil, err
			}
			part := &c.Parts[j]
			path := pathAt(t.path, "parts", j)
			if err := eachMember(part.Extra, func(k string) error {
				return p.advisoryAt(path+"."+k, "contents.parts."+k, "not translated for "+upstream)
			}); err != nil {
				return nil, err
			}
			if sig := part.ThoughtSignature; t.model && sig != "" && !hasKey(seals, sig) {
				if seals == nil {
					seals = map[string]struct{}{}
				}
				seals[sig] = struct{}{}
				if sr, ok := p.unsealReasoning(sig); ok {
					t.items = append(t.items, gItem{kind: gReasoning, path: path, sealed: sr})
				}
			}
			switch {
			case part.FunctionCall != nil:
				fc := part.FunctionCall
				if !t.model {
					return nil, badRequest(path+".functionCall", "%s.functionCall: function calls belong in model turns", path)
				}
				if err := requiredToolName(path+".functionCall.name", fc.Name); err != nil {
					return nil, err
				}
				args := fc.Args
				switch {
				case len(args) == 0 || string(args) == "null":
					args = jsontext.Value("{}")
				case args.Kind() != '{':
					return nil, badRequest(path+".functionCall.args", "%s.functionCall.args: must be an object", path)
				default:
					args = compactInput(args)
				}
				id := fc.ID
				if id == "" {
					id = fmt.Sprintf("call_%d_%d", i, calls)
				}
				calls++
				pending.add(id, fc.Name)
				t.items = append(t.items, gItem{kind: gCall, path: path, id: id, name: fc.Name, args: args})
			case part.FunctionResponse != nil:
				fr := part.FunctionResponse
				rpath := path + ".functionResponse"
				if t.model {
					return nil, badRequest(rpath, "%s: function responses belong in user turns", rpath)
				}
				if err := requiredToolName(rpath+".name", fr.Name); err != nil {
					return nil, err
				}
				if err := eachMember(fr.Extra, func(k string) error {
					return p.advisoryAt(rpath+"."+k, "functionResponse."+k, "not translated for "+upstream)
				}); err != nil {
					return nil, err
				}
				var media []gItem
				for k := range fr.Parts {
					mp := &fr.Parts[k]
					if mp.InlineData == nil && mp.FileData == nil {
						continue
					}
					media = append(media, gItem{kind: gMedia, path: pathAt(rpath, "parts", k), part: mp})
				}
				cl, ok := pending.answer(fr.ID, fr.Name)
				if !ok {
					return nil, badRequest(rpath, "%s: answers no function call of the model turn before it (no call named %q is left unanswered)", rpath, fr.Name)
				}
				text, isErr := functionResultText(fr.Response)
				t.items = append(t.items, gItem{kind: gResult, path: path, id: cl.id, name: cl.name, text: text, isError: isErr, media: media})
			case part.Thought:
				// Thought summaries are the model's own view of its
				// thinking, never answer text; what the upstream needs
				// back rides in the signature.
			case part.InlineData != nil || part.FileData != nil:
				if t.model {
					if err := p.contract(path, "media the model made cannot be sent back to "+upstream); err != nil {
						return nil, err
					}
					continue
				}
				t.items = append(t.items, gItem{kind: gMedia, path: path, part: part})
			case part.Text != "":
				t.items = append(t.items, gItem{kind: gText, path: path, text: part.Text})
			}
		}
		turns = append(turns, t)
	}
	return turns, nil
}

// ctxStride is how many items of a list are read between looks at the
// request's context: a look costs little, but not nothing.
const ctxStride = 256

// lookAtContext counts an item read (in *n) and, at the first and then
// every ctxStride-th, returns ctx's error once ctx has ended: the client
// is gone and nobody waits for the answer.
func lookAtContext(ctx context.Context, n *int) error {
	*n++
	if *n%ctxStride != 1 {
		return nil
	}
	return ctx.Err()
}

// pendingCalls are the function calls of the last model turn, found for
// a function response by id, or else by name in the order they came, in
// time that does not grow with the calls already answered.
type pendingCalls struct {
	calls  []pendingCall
	byID   map[string][]int // unanswered calls (and some answered: skipped), in order
	byName map[string][]int
	work   *int // counts the calls looked at
}

type pendingCall struct {
	id, name string
	answered bool
}

// reset forgets the calls: a new model turn starts. The maps are made
// anew, not cleared, as clearing a map costs its largest size.
func (q *pendingCalls) reset() {
	q.calls = q.calls[:0]
	q.byID, q.byName = nil, nil
}

func (q *pendingCalls) add(id, name string) {
	if q.byID == nil {
		q.byID, q.byName = map[string][]int{}, map[string][]int{}
	}
	k := len(q.calls)
	q.calls = append(q.calls, pendingCall{id: id, name: name})
	q.byID[id] = append(q.byID[id], k)
	q.byName[name] = append(q.byName[name], k)
}

// answer marks and returns the call a function response answers: the
// first unanswered call with its id, or else the first unanswered call
// with its name.
func (q *pendingCalls) answer(id, name string) (pendingCall, bool) {
	k := -1
	if id != "" {
		k = q.first(q.byID, id)
	}
	if k < 0 {
		k = q.first(q.byName, name)
	}
	if k < 0 {
		return pendingCall{}, false
	}
	q.calls[k].answered = true
	return q.calls[k], true
}

// first is the first unanswered call of m[key]; the answered ones before
// it are left out of m for good, so each call is passed over once.
func (q *pendingCalls) first(m map[string][]int, key string) int {
	ks := m[key]
	for *q.work++; len(ks) > 0 && q.calls[ks[0]].answered; *q.work++ {
		ks = ks[1:]
	}
	if len(ks) == 0 {
		delete(m, key)
		return -1
	}
	m[key] = ks
	return ks[0]
}

// hasKey reports whether m holds k (a nil m holds nothing).
func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// unsealReasoning opens a thoughtSignature tollgate sealed; Google's own
// signatures (and anything else) do not open and are ignored.
func (p *Plan) unsealReasoning(sig string) (sealedReasoning, bool) {
	var sr sealedReasoning
	if p.signer == nil {
		return sr, false
	}
	payload, ok := p.signer.unsealSignature(sig)
	if !ok || jsonx.Unmarshal(payload, &sr) != nil {
		return sr, false
	}
	return sr, len(sr.Blocks) > 0 || sr.Text != "" || len(sr.Item) > 0
}

// functionResultText is a function response as text: the string of a
// response that holds only output, result or content (Gemini CLI sends
// {"output": …}), or only error (then isError); otherwise the response's
// JSON, compact.
func functionResultText(r jsontext.Value) (text string, isError bool) {
	if len(r) == 0 || string(r) == "null" {
		return "", false
	}
	v := gjson.ParseBytes(r)
	if v.IsObject() {
		n, key := 0, ""
		var val gjson.Result
		v.ForEach(func(k, x gjson.Result) bool {
			n++
			key, val = k.Str, x
			return n < 2
		})
		if n == 1 && val.Type == gjson.String {
			switch key {
			case "output", "result", "content":
				return val.Str, false
			case "error":
				return val.Str, true
			}
		}
	}
	return string(compactInput(r)), false
}

// geminiTools reads the function declarations, their schemas converted
// to JSON Schema, and the tools Gemini runs itself.
func (p *Plan) geminiTools(ctx context.Context, tools []gemini.Tool) ([]gFunc, []gServer, error) {
	var funcs []gFunc
	var server []gServer
	for i, t := range tools {
		tp := pathAt("", "tools", i)
		for k, d := range t.FunctionDeclarations {
			dp := fmt.Sprintf("%s.functionDeclarations[%d]", tp, k)
			if err := requiredToolName(dp+".name", d.Name); err != nil {
				return nil, nil, err
			}
			hasParams, hasJSON := len(d.Parameters) > 0 && string(d.Parameters) != "null", len(d.ParametersJSONSchema) > 0 && string(d.ParametersJSONSchema) != "null"
			f := gFunc{name: d.Name, description: d.Description}
			var err error
			switch {
			case hasParams && hasJSON:
				return nil, nil, badRequest(dp+".parametersJsonSchema", "%s.parametersJsonSchema: give parameters or parametersJsonSchema, not both", dp)
			case hasParams:
				f.schema, err = p.jsonSchemaOf(ctx, d.Parameters, dp+".parameters")
			case hasJSON:
				f.schema, err = p.jsonSchemaOf(ctx, d.ParametersJSONSchema, dp+".parametersJsonSchema")
			}
			if err != nil {
				return nil, nil, err
			}
			if err := eachMember(d.Extra, func(m string) error {
				return p.advisoryAt(dp+"."+m, "functionDeclarations."+m, "the upstream reads no "+m+" of a function")
			}); err != nil {
				return nil, nil, err
			}
			funcs = append(funcs, f)
		}
		var m map[string]jsontext.Value
		if len(t.Extra) > 0 && jsonx.Unmarshal(t.Extra, &m) == nil {
			for _, name := range slices.Sorted(maps.Keys(m)) {
				server = append(server, gServer{name: name, path: tp + "." + name})
			}
		}
	}
	return funcs, server, nil
}

// mimeByExtension is the media type a URI's file name extension says.
func mimeByExtension(uri string) string {
	return mime.TypeByExtension(path.Ext(strings.SplitN(uri, "?", 2)[0]))
}

// geminiChoice reads functionCallingConfig.
func geminiChoice(tc *gemini.ToolConfig, funcs []gFunc, p *Plan) (*gChoice, error) {
	if tc == nil {
		return nil, nil
	}
	if err := eachMember(tc.Extra, func(k string) error {
		return p.advisory("toolConfig."+k, "not translated")
	}); err != nil {
		return nil, err
	}
	fc := tc.FunctionCallingConfig
	if fc == nil {
		return nil, nil
	}
	const at = "toolConfig.functionCallingConfig."
	c := &gChoice{}
	switch strings.ToUpper(fc.Mode) {
	case "AUTO", "VALIDATED", "", "MODE_UNSPECIFIED":
		c.mode = "auto"
	case "ANY":
		c.mode = "any"
	case "NONE":
		c.mode = "none"
	default:
		return nil, badRequest(at+"mode", "%smode: must be AUTO, ANY, NONE or VALIDATED, got %q", at, fc.Mode)
	}
	if len(fc.AllowedFunctionNames) == 0 {
		return c, nil
	}
	declared := make(map[string]bool, len(funcs))
	for _, f := range funcs {
		declared[f.name] = true
	}
	c.named = map[string]bool{}
	for k, n := range fc.AllowedFunctionNames {
		if !declared[n] {
			return nil, badRequest(fmt.Sprintf("%sallowedFunctionNames[%d]", at, k), "%sallowedFunctionNames[%d]: no function is declared with the name %q", at, k, n)
		}
		if !c.named[n] {
			c.named[n] = true
			c.names = append(c.names, n)
		}
	}
	return c, nil
}

// allowed reports whether the choice lets the model call the function.
func (c *gChoice) allowed(name string) bool {
	return c == nil || len(c.names) == 0 || c.named[name]
}

// forced is the one function an ANY choice names, if it names one.
func (c *gChoice) forced() string {
	if c != nil && c.mode == "any" && len(c.names) == 1 {
		return c.names[0]
	}
	return ""
}

// geminiMediaType is a part's media type: the one it gives (lower case,
// without parameters), or for a file, the one its name's extension says.
func geminiMediaType(part *gemini.Part) string {
	if part.InlineData != nil {
		return imageMediaType(part.InlineData.MimeType)
	}
	if mt := imageMediaType(part.FileData.MimeType); mt != "" {
		return mt
	}
	return imageMediaType(mimeByExtension(part.FileData.FileURI))
}

// webURL reports whether a file's URI is one the upstream can fetch.
func webURL(uri string) bool {
	return strings.HasPrefix(uri, "https://") || strings.HasPrefix(uri, "http://")
}

// googleFileRefusal says why a file Gemini keeps cannot be sent.
const googleFileRefusal = "files in Google's storage (the Files API, gs://) cannot be read by this upstream; send the data inline"
