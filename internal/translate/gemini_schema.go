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

// Gemini takes function parameters and response schemas in its own
// subset of OpenAPI 3.0's schema object, not JSON Schema. geminiSchema
// converts one:
//
//   - type names go upper case; a type list with "null" becomes nullable,
//     one of several types an anyOf;
//   - oneOf becomes anyOf, a one-member allOf its member, const a
//     one-value enum, local $ref (to $defs or definitions) the schema it
//     names, inlined;
//   - properties keep their declared order (propertyOrdering);
//   - annotations Gemini does not read ($schema, examples, …) are left
//     out; keywords that only narrow what is valid and that Gemini cannot
//     say (additionalProperties, not, multipleOf, …) are left out and
//     reported as dropped, or refused under the strict policy;
//   - what cannot be said without changing what is valid is refused with
//     its path: a recursive $ref, a remote $ref, an allOf of several
//     schemas, tuples, enums of numbers, a schema that accepts nothing,
//     a schema that grows past its bound when its $refs are inlined.

// geminiTypes maps JSON Schema's types to Gemini's.
var geminiTypes = map[string]string{
	"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN", "array": "ARRAY", "object": "OBJECT",
}

// geminiKeep are the keywords copied as they are (after their checks).
var geminiKeep = []string{"title", "description", "default", "minimum", "maximum", "minLength", "maxLength", "pattern",
	"minItems", "maxItems", "minProperties", "maxProperties", "example"}

// geminiFormats are the string formats Gemini reads; others are left out.
var geminiFormats = []string{"enum", "date-time", "int32", "int64", "float", "double"}

// geminiAnnotations are left out silently: they do not change what is valid.
var geminiAnnotations = []string{"$schema", "$id", "$comment", "$anchor", "examples", "deprecated", "readOnly", "writeOnly",
	"$defs", "definitions", "contentMediaType", "contentEncoding", "contentSchema", "$dynamicAnchor"}

// geminiNarrowing only narrow what is valid: left out, reported.
var geminiNarrowing = []string{"additionalProperties", "unevaluatedProperties", "patternProperties", "propertyNames",
	"multipleOf", "uniqueItems", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies",
	"contains", "minContains", "maxContains", "unevaluatedItems", "additionalItems", "exclusiveMinimum", "exclusiveMaximum"}

// maxSchemaDepth bounds nesting, $refs included.
const maxSchemaDepth = 64

// Inlining a $ref copies the definition it names, so definitions that
// each refer to the next one twice double the schema at every level:
// thirty levels, 3 KB of JSON, would inline 2^30 copies. The schemas of
// one request may together grow, with their $refs inlined, to at most
// schemaGrowthFactor times their own size plus schemaGrowthAllowance
// bytes; a schema that would grow past what is left is refused with the
// path where it crossed the bound. Both the schema text read (the schema
// once, a definition again at every $ref that inlines it) and the output
// are counted as the conversion goes, so a refusal costs at most the
// bound's worth of work. A schema without $refs never comes near the
// bound: its conversion is at most about twice its size.
const (
	schemaGrowthFactor    = 4
	schemaGrowthAllowance = 256 << 10
)

// schemaStep refuses to convert the node at path of a schema: nested
// past maxSchemaDepth, or once the output (size bytes so far) passed its
// limit; and stops when ctx ends.
func schemaStep(ctx context.Context, path *schemaPath, depth, size, limit int, tooLarge func(*schemaPath) error) error {
	if depth > maxSchemaDepth {
		return badRequest(path.String(), "%s: the schema nests deeper than %d levels", path, maxSchemaDepth)
	}
	if size > limit {
		return tooLarge(path)
	}
	return ctx.Err() // the client is gone: nobody waits for the answer
}

// schemaPath is where a node of a schema is. It is made into a string
// only for a refusal: a string built at every node would cost each node
// its depth.
type schemaPath struct {
	up  *schemaPath
	seg string // ".properties.name", "[2]", ".#/$defs/Point"
}

func (p *schemaPath) child(seg string) *schemaPath { return &schemaPath{up: p, seg: seg} }

func (p *schemaPath) String() string {
	n := 0
	for q := p; q != nil; q = q.up {
		n += len(q.seg)
	}
	b := make([]byte, n)
	for q := p; q != nil; q = q.up {
		n -= len(q.seg)
		copy(b[n:], q.seg)
	}
	return string(b)
}

type schemaConv struct {
	root  gjson.Result
	p     *Plan
	param string                  // what a drop is reported as: "tools.input_schema"
	refs  []string                // the $refs being inlined, innermost last
	defs  map[string]gjson.Result // the definitions found, by $ref
	// The members of $defs and of definitions, by name, indexed at the
	// first $ref into each: found one by one, each $ref would read
	// through the definitions before its own.
	index map[string]map[string]gjson.Result
	ctx   context.Context
	limit int // bytes this schema may read and write
	read  int // schema text read: the schema, and each inlined definition
}

// geminiSchema converts the JSON Schema schema (raw JSON) found at path.
// It stops with ctx's error when ctx ends.
func geminiSchema(ctx context.Context, schema []byte, path, param string, p *Plan) ([]byte, error) {
	if !jsontext.Value(schema).IsValid() { // stricter than gjson: UTF-8 too
		return nil, badRequest(path, "%s: not valid JSON (UTF-8 text)", path)
	}
	root := gjson.ParseBytes(schema)
	p.schemaSize += len(schema)
	c := &schemaConv{root: root, p: p, param: param, ctx: ctx, read: len(schema),
		limit: schemaGrowthAllowance + schemaGrowthFactor*p.schemaSize - p.schemaGrown}
	at := &schemaPath{seg: path}
	out, err := c.node(nil, root, at, 0, nil)
	if err == nil && len(out) > c.limit {
		err = c.tooLarge(at)
	}
	if err != nil {
		return nil, err
	}
	p.schemaGrown += max(c.read, len(out))
	return out, nil
}

// tooLarge refuses a schema that grows past its bound at path.
func (c *schemaConv) tooLarge(path *schemaPath) error {
	return badRequest(path.String(), "%s: schema expands past %d bytes when its $refs are inlined (Gemini takes no $refs, so each is sent as a copy of its definition)", path, c.limit)
}

// node converts the schema s at path; over are members that win over
// its own (see ref).
func (c *schemaConv) node(b []byte, s gjson.Result, path *schemaPath, depth int, over []member) ([]byte, error) {
	if err := schemaStep(c.ctx, path, depth, len(b), c.limit, c.tooLarge); err != nil {
		return nil, err
	}
	switch {
	case s.Type == gjson.True: // anything
		out := orderedObject{b: append(b, '{')}
		for _, m := range over {
			out.rawMember(m.key, m.raw)
		}
		return append(out.b, '}'), nil
	case s.Type == gjson.False:
		return nil, badRequest(path.String(), "%s: a schema that accepts nothing (false) cannot be sent to Gemini", path)
	case !s.IsObject():
		return nil, badRequest(path.String(), "%s: a schema must be an object", path)
	}
	if ref := s.Get(`\$ref`); ref.Exists() {
		return c.ref(b, s, ref, path, depth, over)
	}
	if all := s.Get("allOf"); all.Exists() {
		members := all.Array()
		if !all.IsArray() || len(members) != 1 {
			return nil, badRequest(path.String()+".allOf", "%s.allOf: Gemini takes no intersection of schemas; merge them into one", path)
		}
		return c.node(b, members[0], path.child(".allOf[0]"), depth+1, over)
	}

	out := orderedObject{b: append(b, '{')}
	nullable := s.Get("nullable").Bool()
	var typ string
	var multi []string
	switch t := s.Get("type"); {
	case t.Type == gjson.String:
		typ = t.Str
	case t.IsArray():
		for _, x := range t.Array() {
			if x.Str == "null" {
				nullable = true
			} else {
				multi = append(multi, x.Str)
			}
		}
		if len(multi) == 1 {
			typ, multi = multi[0], nil
		}
	case t.Exists():
		return nil, badRequest(path.String()+".type", "%s.type: want a type name or a list of them", path)
	}
	if typ == "null" {
		typ, nullable = "", true
	}
	if typ != "" {
		g, ok := geminiTypes[typ]
		if !ok {
			return nil, badRequest(path.String()+".type", "%s.type: %q is not a JSON Schema type", path, typ)
		}
		out.rawMember("type", strconv.Quote(g))
	}

	var anyOf []gjson.Result
	var anyOfPath *schemaPath
	if a := s.Get("anyOf"); a.Exists() {
		anyOf, anyOfPath = a.Array(), path.child(".anyOf")
	} else if a := s.Get("oneOf"); a.Exists() {
		anyOf, anyOfPath = a.Array(), path.child(".oneOf") // exclusive becomes inclusive: still what the model may produce
	}
	if len(multi) > 1 {
		if len(anyOf) > 0 {
			return nil, badRequest(path.String()+".type", "%s: a list of types beside anyOf cannot be sent to Gemini", path)
		}
		b := out.key("anyOf")
		b = append(b, '[')
		for i, t := range multi {
			g, ok := geminiTypes[t]
			if !ok {
				return nil, badRequest(path.String()+".type", "%s.type: %q is not a JSON Schema type", path, t)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = append(append(b, strconv.Quote(g)...), '}')
		}
		out.b = append(b, ']')
	}
	if len(anyOf) > 0 {
		b := out.key("anyOf")
		b = append(b, '[')
		n := 0
		for i, sub := range anyOf {
			if sub.Get("type").Str == "null" && len(sub.Map()) == 1 {
				nullable = true // {"type":"null"} among the options: nullable
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = c.node(b, sub, anyOfPath.child("["+strconv.Itoa(i)+"]"), depth+1, nil); err != nil {
				return nil, err
			}
			n++
		}
		out.b = append(b, ']')
	}
	if nullable {
		out.rawMember("nullable", "true")
	}

	if e := s.Get("enum"); e.Exists() {
		vals := e.Array()
		var strs []string
		for _, v := range vals {
			switch v.Type {
			case gjson.String:
				strs = append(strs, v.Raw)
			case gjson.Null:
				if !nullable {
					out.rawMember("nullable", "true")
					nullable = true
				}
			default:
				return nil, badRequest(path.String()+".enum", "%s.enum: Gemini takes enums of strings only, not %s", path, v.Raw)
			}
		}
		if typ == "" {
			out.rawMember("type", `"STRING"`)
		}
		out.rawMember("enum", "["+strings.Join(strs, ",")+"]")
	}
	if k := s.Get("const"); k.Exists() {
		if k.Type != gjson.String {
			return nil, badRequest(path.String()+".const", "%s.const: Gemini takes constants of strings only, not %s", path, k.Raw)
		}
		if typ == "" {
			out.rawMember("type", `"STRING"`)
		}
		out.rawMember("enum", "["+k.Raw+"]")
	}
	if f := s.Get("format"); f.Type == gjson.String && slices.Contains(geminiFormats, f.Str) {
		out.rawMember("format", f.Raw)
	}
	for _, k := range geminiKeep {
		if v := s.Get(k); v.Exists() {
			raw := v.Raw
			if i := slices.IndexFunc(over, func(m member) bool { return m.key == k }); i >= 0 {
				raw = over[i].raw
			}
			out.rawMember(k, raw)
		}
	}

	if props := s.Get("properties"); props.Exists() {
		if !props.IsObject() {
			return nil, badRequest(path.String()+".properties", "%s.properties: want an object", path)
		}
		var names []string
		named := map[string]bool{}
		var err error
		b := out.key("properties")
		b = append(b, '{')
		props.ForEach(func(k, v gjson.Result) bool {
			if len(names) > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendQuote(b, k.Str)
			b = append(b, ':')
			b, err = c.node(b, v, path.child(".properties."+k.Str), depth+1, nil)
			names = append(names, k.Str)
			named[k.Str] = true
			return err == nil
		})
		if err != nil {
			return nil, err
		}
		out.b = append(b, '}')
		if req := s.Get("required"); req.IsArray() {
			var kept []string
			for _, r := range req.Array() {
				if r.Type == gjson.String && named[r.Str] {
					kept = append(kept, string(jsonx.AppendQuote(nil, r.Str)))
				}
			}
			if len(kept) > 0 {
				out.rawMember("required", "["+strings.Join(kept, ",")+"]")
			}
		}
		if len(names) > 1 {
			quoted := make([]string, len(names))
			for i, n := range names {
				quoted[i] = string(jsonx.AppendQuote(nil, n))
			}
			out.rawMember("propertyOrdering", "["+strings.Join(quoted, ",")+"]")
		}
	}
	if items := s.Get("items"); items.Exists() {
		if items.IsArray() {
			return nil, badRequest(path.String()+".items", "%s.items: Gemini takes no tuples (a list of item schemas)", path)
		}
		var err error
		b := out.key("items")
		if out.b, err = c.node(b, items, path.child(".items"), depth+1, nil); err != nil {
			return nil, err
		}
	}
	if s.Get("prefixItems").Exists() {
		return nil, badRequest(path.String()+".prefixItems", "%s.prefixItems: Gemini takes no tuples", path)
	}

	var err error
	s.ForEach(func(k, _ gjson.Result) bool {
		if slices.Contains(geminiNarrowing, k.Str) {
			if k.Str == "additionalProperties" && s.Get("additionalProperties").Type == gjson.True {
				return true // allows what is allowed anyway
			}
			if c.p.policy != PolicyStrict {
				// Dropped and reported: the path, as long as the schema is
				// deep and its names long, is built only for a refusal.
				c.p.drop(c.param + "." + k.Str)
				return true
			}
			err = c.p.advisoryAt(path.String()+"."+k.Str, c.param+"."+k.Str, "Gemini's schemas have no "+k.Str)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	for _, m := range over {
		if !s.Get(m.key).Exists() {
			out.rawMember(m.key, m.raw)
		}
	}
	return append(out.b, '}'), nil
}

// member is a member of a schema's output object: key and raw JSON value.
type member struct{ key, raw string }

// ref inlines a local reference; siblings of $ref other than description
// and title are left out, as draft-07 says. Those two win over the
// definition's own: they are written in its place, or after the
// definition's members; and over, the siblings of a $ref that led here,
// win over them in turn.
func (c *schemaConv) ref(b []byte, s, ref gjson.Result, path *schemaPath, depth int, over []member) ([]byte, error) {
	target := ref.Str
	if slices.Contains(c.refs, target) {
		return nil, badRequest(path.String()+".$ref", "%s.$ref: %q refers to itself; Gemini takes no recursive schemas", path, target)
	}
	t, err := c.definition(target, path)
	if err != nil {
		return nil, err
	}
	if c.read += len(t.Raw); c.read > c.limit {
		return nil, c.tooLarge(path.child("." + target))
	}
	var own []member
	for _, k := range []string{"description", "title"} {
		if v := s.Get(k); v.Exists() {
			own = append(own, member{k, v.Raw})
		}
	}
	for _, m := range over {
		if i := slices.IndexFunc(own, func(o member) bool { return o.key == m.key }); i >= 0 {
			own[i].raw = m.raw
		} else {
			own = append(own, m)
		}
	}
	c.refs = append(c.refs, target)
	b, err = c.node(b, t, path.child("."+target), depth+1, own)
	c.refs = c.refs[:len(c.refs)-1]
	return b, err
}

// definition finds the definition a local $ref names, once per target.
func (c *schemaConv) definition(target string, path *schemaPath) (gjson.Result, error) {
	if t, ok := c.defs[target]; ok {
		return t, nil
	}
	var t gjson.Result
	switch {
	case target == "#":
		t = c.root
	case strings.HasPrefix(target, "#/$defs/"):
		t = c.member(`\$defs`, strings.TrimPrefix(target, "#/$defs/"))
	case strings.HasPrefix(target, "#/definitions/"):
		t = c.member("definitions", strings.TrimPrefix(target, "#/definitions/"))
	default:
		return gjson.Result{}, badRequest(path.String()+".$ref", "%s.$ref: only references within the schema (#/$defs/…) can be sent to Gemini, not %q", path, target)
	}
	if !t.Exists() {
		return t, badRequest(path.String()+".$ref", "%s.$ref: %q names no definition", path, target)
	}
	if c.defs == nil {
		c.defs = map[string]gjson.Result{}
	}
	c.defs[target] = t
	return t, nil
}

// member is the definition named tok (a JSON pointer token) in the
// root's object at key: the first member of that name, in the first
// object of that key, as gjson's Get finds them.
func (c *schemaConv) member(key, tok string) gjson.Result {
	m, ok := c.index[key]
	if !ok {
		m = map[string]gjson.Result{}
		c.root.Get(key).ForEach(func(k, v gjson.Result) bool {
			if _, ok := m[k.Str]; !ok {
				m[k.Str] = v
			}
			return true
		})
		if c.index == nil {
			c.index = map[string]map[string]gjson.Result{}
		}
		c.index[key] = m
	}
	return m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
}

// orderedObject writes an object's members in order.
type orderedObject struct {
	b []byte
	n int
}

func (o *orderedObject) key(k string) []byte {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = jsonx.AppendQuote(o.b, k)
	return append(o.b, ':')
}

func (o *orderedObject) rawMember(k, raw string) {
	o.b = append(o.key(k), raw...)
}
