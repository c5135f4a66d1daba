package translate

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestJSONSchemaOf(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"upper-case types", `{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"ARRAY","items":{"type":"INTEGER"}}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"integer"}}},"required":["a"]}`},
		{"nullable type", `{"type":"STRING","nullable":true}`, `{"type":["string","null"]}`},
		{"nullable false", `{"type":"BOOLEAN","nullable":false}`, `{"type":"boolean"}`},
		{"nullable anyOf", `{"anyOf":[{"type":"NUMBER"}],"nullable":true}`, `{"anyOf":[{"type":"number"},{"type":"null"}]}`},
		{"nullable enum", `{"type":"STRING","enum":["a"],"nullable":true}`, `{"type":["string","null"],"enum":["a",null]}`},
		{"integer enum", `{"type":"INTEGER","format":"enum","enum":["1","20","x"]}`, `{"type":"integer","enum":[1,20,"x"]}`},
		{"string enum kept", `{"type":"STRING","format":"enum","enum":["1"]}`, `{"type":"string","enum":["1"]}`},
		{"unspecified type", `{"type":"TYPE_UNSPECIFIED","description":"d"}`, `{"description":"d"}`},
		{"example", `{"type":"STRING","example":"x"}`, `{"type":"string","examples":["x"]}`},
		{"examples win", `{"example":"x","examples":["y"]}`, `{"examples":["y"]}`},
		{"property ordering", `{"properties":{"a":{},"b":{},"c":{}},"propertyOrdering":["c","a","ghost"]}`, `{"properties":{"c":{},"a":{},"b":{}}}`},
		{"json schema kept", `{"$schema":"x","type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"STRING"}},"additionalProperties":false}`,
			`{"$schema":"x","type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"string"}},"additionalProperties":false}`},
		{"type list", `{"type":["STRING","null","string"]}`, `{"type":["string","null"]}`},
		{"tuple items", `{"items":[{"type":"STRING"},true]}`, `{"items":[{"type":"string"},true]}`},
		{"boolean schema", `true`, `true`},
		{"property named type", `{"properties":{"type":{"type":"STRING"},"nullable":{"type":"BOOLEAN"}}}`, `{"properties":{"type":{"type":"string"},"nullable":{"type":"boolean"}}}`},
		{"escaped names", `{"properties":{"a.b":{"type":"STRING"}},"propertyOrdering":["a.b"]}`, `{"properties":{"a.b":{"type":"string"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := (&Plan{}).jsonSchemaOf(t.Context(), []byte(tc.in), "parameters")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestJSONSchemaOfRefusals(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"TUPLE"}`:       `parameters.type: "TUPLE" is not a schema type`,
		`{"properties":{"a":3}}`: `parameters.properties.a: a schema must be an object`,
		`{"type":{"x":1}}`:       `parameters.type: want a type name or a list of them`,
		`{"properties":[]}`:      `parameters.properties: want an object`,
		strings.Repeat(`{"items":`, 70) + `{}` + strings.Repeat(`}`, 70): `nests deeper than 64 levels`,
	} {
		_, err := (&Plan{}).jsonSchemaOf(t.Context(), []byte(in), "parameters")
		var re *RequestError
		if !errors.As(err, &re) || !strings.Contains(re.Message, want) || !strings.HasPrefix(re.Message, re.Param) {
			t.Errorf("%.60s: got %v, want a RequestError with %q", in, err, want)
		}
	}
}

// The schemas of one request share one bound, and a conversion stops
// when the request's context ends.
func TestJSONSchemaOfBounds(t *testing.T) {
	p := &Plan{schemaGrown: schemaGrowthAllowance + 1000}
	if _, err := p.jsonSchemaOf(t.Context(), []byte(`{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`), "parameters"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("past the bound: got %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (&Plan{}).jsonSchemaOf(ctx, []byte(`{"type":"OBJECT"}`), "parameters"); !errors.Is(err, context.Canceled) {
		t.Errorf("after the context ended: got %v", err)
	}
	body := `{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"}}]}]}`
	for name, translate := range geminiRequestPairs {
		if _, _, err := translate(ctx, []byte(body), Target{Model: "m"}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s after the context ended: got %v", name, err)
		}
	}
}

// A wide schema converts in time and memory linear in its size.
func BenchmarkJSONSchemaOfWide(b *testing.B) {
	var s strings.Builder
	s.WriteString(`{"type":"OBJECT","properties":{`)
	for i := range 2000 {
		if i > 0 {
			s.WriteByte(',')
		}
		s.WriteString(`"p` + strconv.Itoa(i) + `":{"type":"STRING","nullable":true,"enum":["a","b"]}`)
	}
	s.WriteString(`}}`)
	schema := []byte(s.String())
	b.SetBytes(int64(len(schema)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&Plan{}).jsonSchemaOf(context.Background(), schema, "parameters"); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzJSONSchemaOf: any JSON converts to JSON, or is refused with a
// RequestError naming where.
func FuzzJSONSchemaOf(f *testing.F) {
	for _, s := range []string{`{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true}},"propertyOrdering":["a"]}`,
		`{"anyOf":[{"type":"INTEGER","format":"enum","enum":["1"]}],"nullable":true,"example":1}`, `true`, `{"items":[{}],"$defs":{"x":{"not":{}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		if !jsontext.Value(schema).IsValid() {
			return
		}
		out, err := (&Plan{}).jsonSchemaOf(context.Background(), schema, "parameters")
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || !strings.HasPrefix(re.Param, "parameters") {
				t.Fatalf("error %v", err)
			}
			return
		}
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("not JSON: %s", out)
		}
	})
}
