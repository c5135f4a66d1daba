package embeddings

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeGolden(t *testing.T) {
	vecs := [][]float32{{1, -2}, {0.1, 1e-7}}
	tests := []struct {
		format, want string
	}{
		{"float", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,-2]},{"object":"embedding","index":1,"embedding":[0.1,1e-07]}],"model":"m\"x","usage":{"prompt_tokens":7,"total_tokens":7}}`},
		// 1, -2 are 00 00 80 3f 00 00 00 c0 little-endian; 0.1 is cd cc cc 3d.
		{"base64", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AACAPwAAAMA="},{"object":"embedding","index":1,"embedding":"zczMPZW/1jM="}],"model":"m\"x","usage":{"prompt_tokens":7,"total_tokens":7}}`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			got := string(Encode([]byte("prefix:"), vecs, `m"x`, tt.format, 7))
			if got != "prefix:"+tt.want {
				t.Errorf("Encode =\n%s\nwant\n%s", got, tt.want)
			}
			if !json.Valid([]byte(got[len("prefix:"):])) {
				t.Error("not valid JSON")
			}
		})
	}
}

func TestEncodeEmpty(t *testing.T) {
	got := string(Encode(nil, nil, "m", "float", 0))
	want := `{"object":"list","data":[],"model":"m","usage":{"prompt_tokens":0,"total_tokens":0}}`
	if got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
}

func TestEncodeNonFinite(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	got := Encode(nil, [][]float32{{nan, inf, -inf, 1}}, "m", "float", 1)
	if !json.Valid(got) || !strings.Contains(string(got), `[0,0,0,1]`) {
		t.Errorf("Encode = %s", got)
	}
	// base64 carries every bit pattern as it is.
	vecs, _, err := Decode(Encode(nil, [][]float32{{nan, inf}}, "m", "base64", 1))
	if err != nil || !math.IsNaN(float64(vecs[0][0])) || !math.IsInf(float64(vecs[0][1]), 1) {
		t.Errorf("Decode = %v, %v", vecs, err)
	}
}

// Every float32 value, written either way, reads back bit for bit.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	special := []float32{0, 1, -1, 0.1, -0.1, 1e-45, -1e-45, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1.1754942e-38, 16777217, 3.4028235e38, 0.033203125}
	for _, dims := range []int{1, 2, 3, 191, 192, 193, 384, 1536, 3072} {
		vecs := make([][]float32, 3)
		for i := range vecs {
			v := make([]float32, dims)
			for j := range v {
				switch j % 3 {
				case 0: // any finite bit pattern
					for {
						v[j] = math.Float32frombits(rng.Uint32())
						if !math.IsNaN(float64(v[j])) && !math.IsInf(float64(v[j]), 0) {
							break
						}
					}
				case 1: // embedding-like
					v[j] = float32(rng.NormFloat64() * 0.05)
				default:
					v[j] = special[(i+j)%len(special)]
				}
			}
			vecs[i] = v
		}
		for _, format := range []string{"float", "base64"} {
			body := Encode(nil, vecs, "text-embedding-3-large", format, 42)
			got, tokens, err := Decode(body)
			if err != nil {
				t.Fatalf("dims %d %s: Decode: %v", dims, format, err)
			}
			if tokens != 42 {
				t.Errorf("dims %d %s: tokens %d", dims, format, tokens)
			}
			if !sameBits(got, vecs, false) {
				t.Errorf("dims %d %s: vectors differ after the round trip", dims, format)
			}
		}
	}
}

// sameBits compares vectors bit for bit; with zeroNonFinite, as the float
// form carries them: non-finite values written as 0.
func sameBits(got, sent [][]float32, zeroNonFinite bool) bool {
	if len(got) != len(sent) {
		return false
	}
	for i := range sent {
		if len(got[i]) != len(sent[i]) {
			return false
		}
		for j, f := range sent[i] {
			if zeroNonFinite && (math.IsNaN(float64(f)) || math.IsInf(float64(f), 0)) {
				f = 0
			}
			if math.Float32bits(got[i][j]) != math.Float32bits(f) {
				return false
			}
		}
	}
	return true
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   [][]float32
		tokens int
	}{
		{"float", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1]}],"model":"m","usage":{"prompt_tokens":3,"total_tokens":3}}`,
			[][]float32{{0.5, -1}}, 3},
		{"base64", `{"data":[{"index":0,"embedding":"AACAPwAAAMA="}],"usage":{"prompt_tokens":2}}`,
			[][]float32{{1, -2}}, 2},
		{"out of order", `{"data":[{"index":1,"embedding":[2]},{"index":0,"embedding":[1]}],"usage":{"prompt_tokens":1}}`,
			[][]float32{{1}, {2}}, 1},
		{"no usage", `{"data":[{"index":0,"embedding":[1]}]}`, [][]float32{{1}}, 0},
		{"null usage", `{"data":[{"index":0,"embedding":[1]}],"usage":null}`, [][]float32{{1}}, 0},
		{"exponents", `{"data":[{"index":0,"embedding":[1e-3,-2.5E+2,0]}],"usage":{"prompt_tokens":1.0}}`,
			[][]float32{{0.001, -250, 0}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, tokens, err := Decode([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" || tokens != tt.tokens {
				t.Errorf("Decode: tokens %d (want %d) (-want +got):\n%s", tokens, tt.tokens, d)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":           `{"data":`,
		"not an object":      `[]`,
		"no data":            `{"object":"list"}`,
		"data not an array":  `{"data":{}}`,
		"empty data":         `{"data":[]}`,
		"no index":           `{"data":[{"embedding":[1]}]}`,
		"index out of range": `{"data":[{"index":1,"embedding":[1]}]}`,
		"negative index":     `{"data":[{"index":-1,"embedding":[1]}]}`,
		"index twice":        `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`,
		"string index":       `{"data":[{"index":"0","embedding":[1]}]}`,
		"no embedding":       `{"data":[{"index":0}]}`,
		"empty embedding":    `{"data":[{"index":0,"embedding":[]}]}`,
		"empty base64":       `{"data":[{"index":0,"embedding":""}]}`,
		"string value":       `{"data":[{"index":0,"embedding":[1,"2"]}]}`,
		"null value":         `{"data":[{"index":0,"embedding":[1,null]}]}`,
		"nested value":       `{"data":[{"index":0,"embedding":[[1]]}]}`,
		"float32 overflow":   `{"data":[{"index":0,"embedding":[1e39]}]}`,
		"bad base64":         `{"data":[{"index":0,"embedding":"AAC*PwAA"}]}`,
		"base64 of 3 bytes":  `{"data":[{"index":0,"embedding":"AAAA"}]}`,
		"base64 unpadded":    `{"data":[{"index":0,"embedding":"AACAPwAAAMA"}]}`,
		"bad prompt_tokens":  `{"data":[{"index":0,"embedding":[1]}],"usage":{"prompt_tokens":"3"}}`,
		"no prompt_tokens":   `{"data":[{"index":0,"embedding":[1]}],"usage":{}}`,
		"lengths differ":     `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`,
		"fraction of tokens": `{"data":[{"index":0,"embedding":[1]}],"usage":{"prompt_tokens":1.5}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if v, n, err := Decode([]byte(body)); err == nil {
				t.Errorf("Decode = %v, %d, nil; want an error", v, n)
			}
		})
	}
}

// A long base64 embedding with its padding in the middle (at a chunk
// boundary of the decoder) is refused, not cut short.
func TestDecodeBase64PaddingInside(t *testing.T) {
	whole := string(Encode(nil, [][]float32{make([]float32, 192)}, "m", "base64", 0))
	i := strings.Index(whole, `"embedding":"`) + len(`"embedding":"`)
	chunk := whole[i : i+1024] // exactly the decoder's chunk: 192 floats
	body := `{"data":[{"index":0,"embedding":"` + chunk[:1020] + `AA==` + chunk + `"}]}`
	if _, _, err := Decode([]byte(body)); err == nil {
		t.Error("Decode accepted padding inside the base64")
	}
}

// gjson validates recursively: a deeply nested body must be refused, not
// overflow the stack (a fatal error, which recover cannot catch).
func TestDeepNesting(t *testing.T) {
	for _, depth := range []int{maxDepth - 10, maxDepth + 1, 1 << 20} {
		nest := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		if _, err := Parse([]byte(`{"model":"m","input":` + nest + `}`)); err == nil {
			t.Errorf("depth %d: Parse accepted", depth)
		}
		if _, _, err := Decode([]byte(`{"data":` + nest + `}`)); err == nil {
			t.Errorf("depth %d: Decode accepted", depth)
		}
		if _, err := GeminiAnswer([]byte(`{"embeddings":`+nest+`}`), 1); err == nil {
			t.Errorf("depth %d: GeminiAnswer accepted", depth)
		}
	}
	// Brackets inside strings do not count.
	deepText := strings.Repeat("[", maxDepth+1)
	r, err := Parse([]byte(`{"model":"m","input":"\"\\` + deepText + `"}`))
	if err != nil || r.Inputs[0].Text != `"\`+deepText {
		t.Errorf("Parse of a text full of brackets: %v", err)
	}
}
