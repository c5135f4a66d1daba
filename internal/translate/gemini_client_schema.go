package translate

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// A Gemini client's schemas (function parameters, response schemas) come
// in Google's subset of OpenAPI 3.0 (parameters, responseSchema) or in
// JSON Schema (parametersJsonSchema, responseJsonSchema), which Gemini
// reads with its own spellings too: Gemini CLI sends "type": "OBJECT" in
// a responseJsonSchema. jsonSchemaOf turns either into the JSON Schema
// the other upstreams read:
//
//   - type names go lower case ("TYPE_UNSPECIFIED" is left out);
//   - nullable becomes "null" among the types (or the anyOf options, or
//     the enum values);
//   - example becomes examples; format "enum" is left out, and an enum of
//     an integer or number schema, which Gemini writes as strings, becomes
//     numbers;
//   - propertyOrdering orders properties and is left out;
//   - everything else, JSON Schema's own keywords included, is copied,
//     and the schemas inside it converted the same way.
//
// The conversion never grows a schema much (no $ref is inlined), but it
// is bounded like geminiSchema's all the same: one budget for the
// request's schemas, a depth limit, and a stop when ctx ends.

// gsMapKeywords hold an object of schemas; gsListKeywords a list of
// them; gsOneKeywords one schema (or a boolean).
var (
	gsMapKeywords  = []string{"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"}
	gsListKeywords = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
	gsOneKeywords  = []string{"items", "not", "additionalProperties", "additionalItems", "contains", "propertyNames",
		"if", "then", "else", "unevaluatedItems", "unevaluatedProperties"}
)

// jsonSchemaTypes are the JSON Schema types, which Gemini spells in upper
// case.
var jsonSchemaTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

type gsConv struct {
	ctx   context.Context
	limit int  // bytes the converted schema may take
	work  *int // Plan.work
}

// jsonSchemaOf converts a Gemini client's schema found at path (Google's
// member names: tools[0].functionDeclarations[2].parameters).
func (p *Plan) jsonSchemaOf(ctx context.Context, schema jsontext.Value, path string) (jsontext.Value, error) {
	if !schema.IsValid() {
		return nil, badRequest(path, "%s: not valid JSON (UTF-8 text)", path)
	}
	p.schemaSize += len(schema)
	c := &gsConv{ctx: ctx, work: &p.work, limit: schemaGrowthAllowance + schemaGrowthFactor*p.schemaSize - p.schemaGrown}
	at := &schemaPath{seg: path}
	out, err := c.node(nil, gjson.ParseBytes(schema), at, 0)
	if err == nil && len(out) > c.limit {
		err = c.tooLarge(at)
	}
	if err != nil {
		return nil, err
	}
	p.schemaGrown += len(out)
	return out, nil
}

func (c *gsConv) tooLarge(path *schemaPath) error {
	return badRequest(path.String(), "%s: the request's schemas are too large to convert (more than %d bytes)", path, c.limit)
}

func (c *gsConv) node(b []byte, s gjson.Result, path *schemaPath, depth int) ([]byte, error) {
	if err := schemaStep(c.ctx, path, depth, len(b), c.limit, c.tooLarge); err != nil {
		return nil, err
	}
	switch {
	case s.Type == gjson.True || s.Type == gjson.False:
		return append(b, s.Raw...), nil
	case !s.IsObject():
		return nil, badRequest(path.String(), "%s: a schema must be an object", path)
	}
	m := firstMembers(s)
	nullable := m.nullable.Type == gjson.True
	var err error
	out := orderedObject{b: append(b, '{')}
	s.ForEach(func(k, v gjson.Result) bool {
		switch key := k.Str; {
		case key == "type":
			out.b, err = c.typeMember(&out, v, nullable, path)
		case key == "nullable" || key == "propertyOrdering":
		case key == "format" && v.Str == "enum":
		case key == "example":
			if !m.examples.Exists() {
				b := out.key("examples")
				out.b = append(append(append(b, '['), v.Raw...), ']')
			}
		case key == "enum":
			out.b = c.enum(out.key("enum"), v, m.typ, nullable)
		case key == "properties":
			out.b, err = c.properties(out.key(key), v, m.ordering, path.child(".properties"), depth)
		case slices.Contains(gsMapKeywords, key):
			out.b, err = c.schemaMap(out.key(key), v, path.child("."+key), depth)
		case slices.Contains(gsListKeywords, key):
			out.b, err = c.schemaList(out.key(key), v, path.child("."+key), depth, key == "anyOf" && nullable && !m.typ.Exists())
		case slices.Contains(gsOneKeywords, key) && v.IsArray() && key == "items":
			out.b, err = c.schemaList(out.key(key), v, path.child(".items"), depth, false)
		case slices.Contains(gsOneKeywords, key):
			out.b, err = c.node(out.key(key), v, path.child("."+key), depth+1)
		default:
			out.rawMember(key, v.Raw)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return append(out.b, '}'), nil
}

// gsMembers are the members of a schema that decide how others are
// written, each the first of its name (as gjson's Get finds it).
type gsMembers struct{ nullable, examples, typ, ordering gjson.Result }

// firstMembers finds them in one pass over the schema: looked up where
// they are used, a schema that repeats a member would be read again at
// each repetition.
func firstMembers(s gjson.Result) gsMembers {
	var m gsMembers
	s.ForEach(func(k, v gjson.Result) bool {
		var at *gjson.Result
		switch k.Str {
		case "nullable":
			at = &m.nullable
		case "examples":
			at = &m.examples
		case "type":
			at = &m.typ
		case "propertyOrdering":
			at = &m.ordering
		default:
			return true
		}
		if !at.Exists() {
			*at = v
		}
		return true
	})
	return m
}

// typeMember writes a type in JSON Schema's spelling, with "null" when
// the schema is nullable.
func (c *gsConv) typeMember(out *orderedObject, v gjson.Result, nullable bool, path *schemaPath) ([]byte, error) {
	var names []string
	switch {
	case v.Type == gjson.String:
		names = []string{v.Str}
	case v.IsArray():
		for _, x := range v.Array() {
			names = append(names, x.Str)
		}
	default:
		return out.b, badRequest(path.String()+".type", "%s.type: want a type name or a list of them", path)
	}
	var types []string
	for _, n := range names {
		t := strings.ToLower(n)
		if n == "TYPE_UNSPECIFIED" || n == "" {
			continue
		}
		if !slices.Contains(jsonSchemaTypes, t) {
			return out.b, badRequest(path.String()+".type", "%s.type: %q is not a schema type", path, n)
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if nullable && len(types) > 0 && !slices.Contains(types, "null") {
		types = append(types, "null")
	}
	switch len(types) {
	case 0:
		return out.b, nil
	case 1:
		return jsonx.AppendQuote(out.key("type"), types[0]), nil
	}
	b := append(out.key("type"), '[')
	for i, t := range types {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendQuote(b, t)
	}
	return append(b, ']'), nil
}

// enum writes enum values: a numeric schema's strings that are numbers
// as numbers (Gemini writes every enum value as a string), and null when
// the schema is nullable.
func (c *gsConv) enum(b []byte, v, typ gjson.Result, nullable bool) []byte {
	if !v.IsArray() {
		return append(b, v.Raw...)
	}
	t := strings.ToLower(typ.Str)
	numeric := t == "integer" || t == "number"
	b = append(b, '[')
	n, hasNull := 0, false
	v.ForEach(func(_, x gjson.Result) bool {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		hasNull = hasNull || x.Type == gjson.Null
		if numeric && x.Type == gjson.String {
			if num := jsontext.Value(x.Str); num.IsValid() && num.Kind() == '0' {
				b = append(b, x.Str...)
				return true
			}
		}
		b = append(b, x.Raw...)
		return true
	})
	if nullable && !hasNull {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, "null"...)
	}
	return append(b, ']')
}

// properties writes the properties in propertyOrdering's order, then the
// others in the order they came.
func (c *gsConv) properties(b []byte, v, ordering gjson.Result, path *schemaPath, depth int) ([]byte, error) {
	if !v.IsObject() {
		return nil, badRequest(path.String(), "%s: want an object", path)
	}
	// Each name's schema is its first member's, as gjson's Get finds
	// it; the names propertyOrdering places are written once.
	first := map[string]gjson.Result{}
	v.ForEach(func(k, s gjson.Result) bool {
		if _, ok := first[k.Str]; !ok {
			first[k.Str] = s
		}
		return lookAtContext(c.ctx, c.work) == nil
	})
	var order []string
	placed := map[string]bool{}
	if ordering.IsArray() {
		ordering.ForEach(func(_, o gjson.Result) bool {
			if _, ok := first[o.Str]; ok && o.Type == gjson.String && !placed[o.Str] {
				placed[o.Str] = true
				order = append(order, o.Str)
			}
			return lookAtContext(c.ctx, c.work) == nil
		})
	}
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	b = append(b, '{')
	n := 0
	var err error
	write := func(name string, s gjson.Result) bool {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(jsonx.AppendQuote(b, name), ':')
		b, err = c.node(b, s, path.child("."+name), depth+1)
		return err == nil
	}
	for _, name := range order {
		if !write(name, first[name]) {
			return nil, err
		}
	}
	v.ForEach(func(k, s gjson.Result) bool {
		if placed[k.Str] {
			return true
		}
		return write(k.Str, s)
	})
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// schemaMap writes an object whose members are schemas.
func (c *gsConv) schemaMap(b []byte, v gjson.Result, path *schemaPath, depth int) ([]byte, error) {
	if !v.IsObject() {
		return append(b, v.Raw...), nil
	}
	b = append(b, '{')
	n := 0
	var err error
	v.ForEach(func(k, s gjson.Result) bool {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(jsonx.AppendQuote(b, k.Str), ':')
		b, err = c.node(b, s, path.child("."+k.Str), depth+1)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// schemaList writes a list of schemas, with {"type": "null"} added when
// the nullable schema offers its options in it.
func (c *gsConv) schemaList(b []byte, v gjson.Result, path *schemaPath, depth int, addNull bool) ([]byte, error) {
	if !v.IsArray() {
		return append(b, v.Raw...), nil
	}
	b = append(b, '[')
	n := 0
	var err error
	v.ForEach(func(_, s gjson.Result) bool {
		if n > 0 {
			b = append(b, ',')
		}
		b, err = c.node(b, s, path.child("["+strconv.Itoa(n)+"]"), depth+1)
		n++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if addNull {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"null"}`...)
	}
	return append(b, ']'), nil
}
