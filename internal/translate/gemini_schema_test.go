package translate

import (
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{}
			got, err := geminiSchema([]byte(tc.in), "tools[0].input_schema", "tools.input_schema", p)
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
		_, err := geminiSchema([]byte(in), "tools[0].input_schema", "tools.input_schema", &Plan{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	// Under the strict policy a narrowing keyword is refused, not dropped.
	_, err := geminiSchema([]byte(`{"type":"object","additionalProperties":false}`), "tools[0].input_schema", "tools.input_schema", &Plan{policy: PolicyStrict})
	if err == nil || !strings.Contains(err.Error(), "tools[0].input_schema.additionalProperties") {
		t.Errorf("strict: %v", err)
	}
	deep := strings.Repeat(`{"type":"array","items":`, 70) + `{}` + strings.Repeat(`}`, 70)
	if _, err := geminiSchema([]byte(deep), "s", "s", &Plan{}); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("deep: %v", err)
	}
}

// FuzzGeminiSchema: any schema is refused or converted to valid JSON.
func FuzzGeminiSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":["string","null"],"enum":["a",null]}}}`))
	f.Add([]byte(`{"anyOf":[{"type":"null"},{"oneOf":[{"const":"x"}]}],"allOf":[{"items":{}}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := geminiSchema(in, "s", "s", &Plan{})
		if err != nil {
			return
		}
		if !jsontext.Value(out).IsValid() {
			t.Fatalf("%s: converted to invalid JSON %s", in, out)
		}
	})
}
