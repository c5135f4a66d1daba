package translate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestGeminiSchema(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		dropped        []string
	}{
		{"object in order", `{"type":"object","properties":{"zeta":{"type":"string","description":"z"},"alpha":{"type":"integer","minimum":1}},"required":["zeta","ghost"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
			`{"type":"OBJECT","properties":{"zeta":{"type":"STRING","description":"z"},"alpha":{"type":"INTEGER","minimum":1}},"required":["zeta"],"propertyOrdering":["zeta","alpha"]}`,
			[]string{"tools.input_schema.additionalProperties"}},
		{"nullable type list", `{"type":["string","null"],"maxLength":5}`, `{"type":"STRING","nullable":true,"maxLength":5}`, nil},
		{"several types", `{"type":["string","integer"]}`, `{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}`, nil},
		{"oneOf with null", `{"oneOf":[{"type":"string"},{"type":"null"}]}`, `{"anyOf":[{"type":"STRING"}],"nullable":true}`, nil},
		{"const", `{"const":"fixed"}`, `{"type":"STRING","enum":["fixed"]}`, nil},
		{"enum with null", `{"enum":["a","b",null]}`, `{"nullable":true,"type":"STRING","enum":["a","b"]}`, nil},
		{"formats", `{"type":"string","format":"date-time"}`, `{"type":"STRING","format":"date-time"}`, nil},
		{"other format left out", `{"type":"string","format":"email"}`, `{"type":"STRING"}`, nil},
		{"array", `{"type":"array","items":{"type":"number"},"minItems":1,"uniqueItems":true}`, `{"type":"ARRAY","minItems":1,"items":{"type":"NUMBER"}}`,
			[]string{"tools.input_schema.uniqueItems"}},
		{"refs inlined", `{"type":"object","properties":{"a":{"$ref":"#/$defs/Point","description":"where"}},"$defs":{"Point":{"type":"object","properties":{"x":{"type":"number"}}}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"OBJECT","properties":{"x":{"type":"NUMBER"}},"description":"where"}}}`, nil},
		{"definitions", `{"properties":{"a":{"$ref":"#/definitions/N"}},"definitions":{"N":{"type":"integer"}}}`, `{"properties":{"a":{"type":"INTEGER"}}}`, nil},
		{"single allOf", `{"allOf":[{"type":"boolean"}]}`, `{"type":"BOOLEAN"}`, nil},
		{"true", `true`, `{}`, nil},
		{"empty", `{}`, `{}`, nil},
		{"additionalProperties true", `{"type":"object","additionalProperties":true}`, `{"type":"OBJECT"}`, nil},
		{"shared refs inlined at each use", `{"properties":{"a":{"$ref":"#/$defs/P"},"b":{"$ref":"#/$defs/P","description":"b"}},"$defs":{"P":{"type":"object","properties":{"x":{"$ref":"#/definitions/N"},"y":{"$ref":"#/definitions/N"}}}},"definitions":{"N":{"type":"number"}}}`,
			`{"properties":{"a":{"type":"OBJECT","properties":{"x":{"type":"NUMBER"},"y":{"type":"NUMBER"}},"propertyOrdering":["x","y"]},"b":{"type":"OBJECT","properties":{"x":{"type":"NUMBER"},"y":{"type":"NUMBER"}},"propertyOrdering":["x","y"],"description":"b"}},"propertyOrdering":["a","b"]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{}
			got, err := geminiSchema(t.Context(), []byte(tc.in), "tools[0].input_schema", "tools.input_schema", p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if strings.Join(p.Dropped(), ",") != strings.Join(tc.dropped, ",") {
				t.Errorf("dropped %v, want %v", p.Dropped(), tc.dropped)
			}
		})
	}
}

func TestGeminiSchemaRefusals(t *testing.T) {
	for in, want := range map[string]string{
		`{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"}}}}}`: `refers to itself`,
		`{"$ref":"https://example.com/schema.json"}`:                                                               `only references within the schema`,
		`{"$ref":"#/$defs/Missing"}`:                                                                               `names no definition`,
		`{"allOf":[{"type":"object"},{"required":["a"]}]}`:                                                         `no intersection`,
		`{"type":"array","items":[{"type":"string"}]}`:                                                             `no tuples`,
		`{"type":"array","prefixItems":[{"type":"string"}]}`:                                                       `no tuples`,
		`{"enum":[1,2,3]}`:           `enums of strings only`,
		`{"const":3}`:                `constants of strings only`,
		`false`:                      `accepts nothing`,
		`{"type":"text"}`:            `not a JSON Schema type`,
		`{"properties":{"a":false}}`: `tools[0].input_schema.properties.a: a schema that accepts nothing`,
	} {
		_, err := geminiSchema(t.Context(), []byte(in), "tools[0].input_schema", "tools.input_schema", &Plan{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	// Under the strict policy a narrowing keyword is refused, not dropped.
	_, err := geminiSchema(t.Context(), []byte(`{"type":"object","additionalProperties":false}`), "tools[0].input_schema", "tools.input_schema", &Plan{policy: PolicyStrict})
	if err == nil || !strings.Contains(err.Error(), "tools[0].input_schema.additionalProperties") {
		t.Errorf("strict: %v", err)
	}
	deep := strings.Repeat(`{"type":"array","items":`, 70) + `{}` + strings.Repeat(`}`, 70)
	if _, err := geminiSchema(t.Context(), []byte(deep), "s", "s", &Plan{}); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("deep: %v", err)
	}
}

// FuzzGeminiSchema: any schema is refused or converted to valid JSON
// within the bound of its size.
func FuzzGeminiSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":["string","null"],"enum":["a",null]}}}`))
	f.Add([]byte(`{"anyOf":[{"type":"null"},{"oneOf":[{"const":"x"}]}],"allOf":[{"items":{}}]}`))
	f.Add([]byte(fanOutSchema(8)))
	f.Add([]byte(fanOutSchema(30)))
	f.Add([]byte(`{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]},"b":{"items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`))
	f.Add([]byte(`{"definitions":{"a":{"properties":{"x":{"$ref":"#/definitions/a"},"y":{"$ref":"#"}}}},"$ref":"#/definitions/a"}`))
	f.Add([]byte(`{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/missing"}]},"b":{"type":"string"}},"items":{"$ref":"#/$defs/a"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := geminiSchema(t.Context(), in, "s", "s", &Plan{})
		if err != nil {
			return
		}
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("%s: converted to invalid JSON %s", in, out)
		}
		if bound := schemaGrowthAllowance + schemaGrowthFactor*len(in); len(out) > bound {
			t.Fatalf("%s: converted to %d bytes, past the bound of %d", in, len(out), bound)
		}
	})
}

// FuzzGeminiSchemaRefs fuzzes the shapes of definitions that refer to
// each other: a chain of depth definitions, each referring width times to
// the definition jump places on (back to itself or an earlier one when
// jump is 0 or less: a cycle; past the last one: a missing definition),
// the last one being leaf. Each is refused or converted to valid JSON
// within the bound, without building what its $refs would fan out to.
func FuzzGeminiSchemaRefs(f *testing.F) {
	f.Add(uint8(30), uint8(2), int8(1), `{"type":"string"}`)
	f.Add(uint8(12), uint8(3), int8(1), `{"type":"integer","description":"n"}`)
	f.Add(uint8(5), uint8(2), int8(0), `{}`)
	f.Add(uint8(6), uint8(2), int8(-2), `true`)
	f.Add(uint8(4), uint8(2), int8(9), `{"enum":["a","b"]}`)
	f.Fuzz(func(t *testing.T, depth, width uint8, jump int8, leaf string) {
		if depth > 64 || width > 16 {
			return
		}
		var b strings.Builder
		b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
		for i := range int(depth) {
			fmt.Fprintf(&b, `"d%d":{"anyOf":[`, i)
			for j := range int(width) {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"$ref":"#/$defs/d%d"}`, max(i+int(jump), 0))
			}
			b.WriteString(`]},`)
		}
		fmt.Fprintf(&b, `"d%d":%s}}`, depth, leaf)
		in := []byte(b.String())
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := geminiSchema(t.Context(), in, "s", "s", &Plan{})
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
			t.Fatalf("%s: allocated %d bytes", in, n)
		}
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("%s: %T %v, want a request error", in, err, err)
			}
			return
		}
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("%s: converted to invalid JSON %s", in, out)
		}
		if bound := schemaGrowthAllowance + schemaGrowthFactor*len(in); len(out) > bound {
			t.Fatalf("%s: converted to %d bytes, past the bound of %d", in, len(out), bound)
		}
	})
}

// fanOutSchema is an object schema whose definitions d0 … d(depth-1)
// each refer to the next one twice, ending in a string: with its $refs
// inlined it holds 2^depth copies of the last definition.
func fanOutSchema(depth int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"root":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range depth {
		fmt.Fprintf(&b, `"d%d":{"type":"object","properties":{"left":{"$ref":"#/$defs/d%d"},"right":{"$ref":"#/$defs/d%d"}}},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, depth)
	return b.String()
}

// A schema whose $refs fan out is refused with a 400 naming the path
// where it grew past its bound, by every translator for Gemini, after a
// bounded amount of work: 2^depth copies are never built.
func TestGeminiSchemaFanOut(t *testing.T) {
	for _, depth := range []int{16, 30} {
		schema := fanOutSchema(depth)
		for _, tc := range []struct{ pair, body, path string }{
			{"m2g", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + schema + `}]}`, "tools[0].input_schema"},
			{"c2g", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}]}`, "tools[0].function.parameters"},
			{"r2g", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":` + schema + `}]}`, "tools[0].parameters"},
			{"m2g", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"output_config":{"format":{"type":"json_schema","schema":` + schema + `}}}`, "output_config.format.schema"},
			{"c2g", `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}}`, "response_format.json_schema.schema"},
			{"r2g", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"x","schema":` + schema + `}}}`, "text.format.schema"},
		} {
			t.Run(fmt.Sprintf("%s/%s/depth %d", tc.pair, tc.path, depth), func(t *testing.T) {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, _, err := bodyPairs[tc.pair](t.Context(), []byte(tc.body), Target{Model: "u"})
				runtime.ReadMemStats(&after)
				var re *RequestError
				if !errors.As(err, &re) {
					t.Fatalf("got %v, want a request error", err)
				}
				if !strings.HasPrefix(re.Param, tc.path+".properties.root.#/$defs/d0.properties.") ||
					!strings.HasPrefix(re.Message, re.Param+": schema expands past ") || !strings.HasSuffix(re.Message, " bytes when its $refs are inlined (Gemini takes no $refs, so each is sent as a copy of its definition)") {
					t.Errorf("param %q, message %q", re.Param, re.Message)
				}
				// The bound is a few hundred KB: the work that finds it
				// allocates about 2 MB, not the GBs of 2^depth copies.
				if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
					t.Errorf("allocated %d bytes", n)
				}
			})
		}
	}
}

// A schema that shares its definitions within the bound converts in full;
// the bound holds for a request's schemas together, so that many tools of
// one request cannot each grow to it.
func TestGeminiSchemaBound(t *testing.T) {
	tool := func(i, depth int) string {
		return fmt.Sprintf(`{"name":"f%d","input_schema":%s}`, i, fanOutSchema(depth))
	}
	request := func(tools ...string) []byte {
		return []byte(`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Join(tools, ",") + `]}`)
	}
	out, _, err := MessagesBodyToGemini(t.Context(), request(tool(0, 10)), Target{Model: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), `{"type":"STRING"}`); n != 1<<10 {
		t.Errorf("depth 10: %d strings, want %d", n, 1<<10)
	}
	for _, tc := range []struct {
		name  string
		body  []byte
		param string
	}{
		{"one schema", request(tool(0, 12)), "tools[0].input_schema"},
		{"the request's schemas together", request(tool(0, 10), tool(1, 10), tool(2, 10)), "tools[2].input_schema"},
	} {
		_, _, err := MessagesBodyToGemini(t.Context(), tc.body, Target{Model: "u"})
		var re *RequestError
		if !errors.As(err, &re) || !strings.HasPrefix(re.Param, tc.param+".") || !strings.Contains(re.Message, "schema expands past") {
			t.Errorf("%s: %v, want a refusal at %s", tc.name, err, tc.param)
		}
	}
}

// The description and title beside a $ref are written in the place of the
// definition's own as it is inlined, not set afterwards on a copy of it:
// a chain of 30 described $refs to a 200 KB definition allocates about
// what it outputs, not 30 copies of it.
func TestGeminiSchemaRefSiblings(t *testing.T) {
	var s strings.Builder
	s.WriteString(`{"type":"object","properties":{"root":{"$ref":"#/$defs/d0","description":"r"}},"$defs":{`)
	for i := range 30 {
		fmt.Fprintf(&s, `"d%d":{"type":"object","properties":{"next":{"$ref":"#/$defs/d%d","description":"n","title":"t%d"}}},`, i, i+1, i)
	}
	s.WriteString(`"d30":{"type":"string","title":"leaf","pattern":"` + strings.Repeat("x", 200<<10) + `"}}}`)
	in := []byte(s.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := geminiSchema(t.Context(), in, "s", "s", &Plan{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*uint64(len(in)) {
		t.Errorf("allocated %d bytes for a %d-byte schema", n, len(in))
	}
	leaf := `{"type":"STRING","title":"t29","pattern":"` + strings.Repeat("x", 200<<10) + `","description":"n"}`
	if !strings.Contains(string(out), `"next":`+leaf+`}`) || strings.Count(string(out), `"description":"n","title":"t`) != 29 || !strings.HasSuffix(string(out), `"description":"n","title":"t0"}},"description":"r"}}}`) {
		t.Errorf("got %.300s…%.300s", out, out[len(out)-min(len(out), 300):])
	}
}

// A translation whose request has ended stops with the context's error.
func TestGeminiSchemaContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	schema := fanOutSchema(4)
	for pair, body := range map[string]string{
		"m2g": `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + schema + `}]}`,
		"c2g": `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + schema + `}}]}`,
		"r2g": `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":` + schema + `}]}`,
	} {
		if _, _, err := bodyPairs[pair](ctx, []byte(body), Target{Model: "u"}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want %v", pair, err, context.Canceled)
		}
	}
}

// BenchmarkGeminiSchemaFanOut is the refusal of a Messages request whose
// tool schema fans out 30 levels deep (2.7 KB of JSON).
func BenchmarkGeminiSchemaFanOut(b *testing.B) {
	body := []byte(`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":` + fanOutSchema(30) + `}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, _, err := MessagesBodyToGemini(b.Context(), body, Target{Model: "u"}); err == nil {
			b.Fatal("converted")
		}
	}
}

// A keyword Gemini's schemas lack is dropped and reported without building
// its schema path: a long property name over many children, each with
// such keywords, made the work the name's length times the children.
func TestGeminiSchemaDroppedKeywordsCostNoPath(t *testing.T) {
	name := strings.Repeat("n", 64<<10)
	var children []string
	for i := range 400 {
		children = append(children, fmt.Sprintf(`"c%d":{"type":"string","minLength":1,"maxLength":9,"pattern":"x","format":"email","not":{}}`, i))
	}
	schema := []byte(`{"type":"object","properties":{"` + name + `":{"type":"object","properties":{` + strings.Join(children, ",") + `}}}}`)
	p := &Plan{}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := geminiSchema(context.Background(), schema, "tools[0].input_schema", "tools.input_schema", p)
	runtime.ReadMemStats(&after)
	if err != nil || len(out) == 0 {
		t.Fatalf("%v", err)
	}
	if len(p.dropped) == 0 {
		t.Error("the keywords were not reported")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("converting a %d KB schema allocated %d MB", len(schema)>>10, n>>20)
	}
}
