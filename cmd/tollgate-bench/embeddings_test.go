package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/embeddings"
)

// The embeddings workloads send 16 distinct texts of 60 bytes in floats,
// naming the upstream's model to a relay and tollgate's to a gateway, as
// the gateway reads them.
func TestEmbeddingsBodies(t *testing.T) {
	for _, c := range []struct {
		workload string
		gateway  bool
		model    string
		dims     int
	}{
		{"embeddings", false, upstreamModelEmbed, embedDimsOpenAI},
		{"embeddings", true, tollgateModelEmbed, embedDimsOpenAI},
		{"embeddings-gemini", true, tollgateModelEmbedGemini, embedDimsGemini},
		{"embeddings-bedrock", true, tollgateModelEmbedTitan, embedDimsTitan},
	} {
		name := fmt.Sprintf("%s/gateway=%v", c.workload, c.gateway)
		w, ok := workloadByName(c.workload)
		if !ok {
			t.Fatalf("%s: no such workload", name)
		}
		spec := newReqSpec(&target{BaseURL: "http://x", gateway: c.gateway}, w)
		if spec.url != "http://x/v1/embeddings" || spec.header.Get("Authorization") != "Bearer "+tollgateMasterKey || spec.stream {
			t.Errorf("%s: url %s, header %v, stream %v", name, spec.url, spec.header, spec.stream)
		}
		req, err := embeddings.Parse(spec.body)
		if err != nil {
			t.Fatalf("%s: the gateway cannot read the body: %v\n%s", name, err, spec.body)
		}
		if req.Model != c.model || req.Format != "float" || len(req.Inputs) != embedInputs {
			t.Errorf("%s: model %q, format %q, %d inputs", name, req.Model, req.Format, len(req.Inputs))
		}
		seen := map[string]bool{}
		for i, in := range req.Inputs {
			if len(in.Text) != embedInputSize || seen[in.Text] {
				t.Errorf("%s: input %d: %d bytes, seen before %v", name, i, len(in.Text), seen[in.Text])
			}
			seen[in.Text] = true
		}
		if w.embedDims() != c.dims {
			t.Errorf("%s: dims %d, want %d", name, w.embedDims(), c.dims)
		}
	}
}

// fakePost sends body to the fake upstream at path, with headers h.
func fakePost(t *testing.T, base, path string, body []byte, h http.Header) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// checkUnit fails when v is not a unit vector of dims values.
func checkUnit(t *testing.T, name string, v []float32, dims int) {
	t.Helper()
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if len(v) != dims || math.Abs(sum-1) > 1e-3 {
		t.Errorf("%s: %d values of norm² %v, want a unit vector of %d", name, len(v), sum, dims)
	}
}

// The fake's answers are those of the APIs, as the gateway reads them
// (package embeddings), to the requests the gateway makes.
func TestFakeEmbeddings(t *testing.T) {
	srv := httptest.NewServer(newFakeUpstream())
	defer srv.Close()
	w, _ := workloadByName("embeddings")
	req, err := embeddings.Parse(w.body(upstreamModelEmbed))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("openai", func(t *testing.T) {
		status, _, body := fakePost(t, srv.URL, "/v1/embeddings", w.body(upstreamModelEmbed), nil)
		if status != 200 {
			t.Fatalf("%d: %s", status, body)
		}
		if err := checkEmbeddingsAnswer(body, embedDimsOpenAI); err != nil {
			t.Error(err)
		}
		var a struct {
			Data []struct {
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &a); err != nil || len(a.Data) != embedInputs {
			t.Fatalf("%v: %d vectors", err, len(a.Data))
		}
		for i, d := range a.Data {
			checkUnit(t, fmt.Sprint("vector ", i), d.Embedding, embedDimsOpenAI)
		}
		if slices.Equal(a.Data[0].Embedding, a.Data[1].Embedding) {
			t.Error("vectors 0 and 1 are the same")
		}
		// The same answer every time: built once, kept.
		if _, _, again := fakePost(t, srv.URL, "/v1/embeddings", w.body(upstreamModelEmbed), nil); !bytes.Equal(again, body) {
			t.Error("a second answer differs")
		}
	})

	t.Run("openai inputs", func(t *testing.T) {
		for _, c := range []struct {
			input  string
			status int
			n      int
		}{
			{`"one text"`, 200, 1},
			{`["a","b","c"]`, 200, 3},
			{`[1,2,3]`, 200, 1},
			{`[[1,2],[3]]`, 200, 2},
			{`[]`, 400, 0},
			{`{}`, 400, 0},
		} {
			status, _, body := fakePost(t, srv.URL, "/v1/embeddings", []byte(`{"model":"`+upstreamModelEmbed+`","input":`+c.input+`}`), nil)
			var a struct {
				Object string
				Data   []json.RawMessage
			}
			if status != c.status || status == 200 && (json.Unmarshal(body, &a) != nil || a.Object != "list" || len(a.Data) != c.n) {
				t.Errorf("input %s: %d, %d vectors, want %d, %d: %s", c.input, status, len(a.Data), c.status, c.n, truncate(string(body), 100))
			}
		}
		if status, _, _ := fakePost(t, srv.URL, "/v1/embeddings", w.body(tollgateModelEmbed), nil); status != 404 {
			t.Errorf("tollgate's model name: %d, want 404", status)
		}
	})

	t.Run("gemini", func(t *testing.T) {
		body, err := embeddings.GeminiRequest(req, upstreamModelEmbedGemini, req.Inputs)
		if err != nil {
			t.Fatal(err)
		}
		status, _, answer := fakePost(t, srv.URL, "/v1beta/models/"+upstreamModelEmbedGemini+":batchEmbedContents", body, nil)
		if status != 200 {
			t.Fatalf("%d: %s", status, answer)
		}
		vs, err := embeddings.GeminiAnswer(answer, embedInputs)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			checkUnit(t, fmt.Sprint("vector ", i), v, embedDimsGemini)
		}
		// The chat model does not embed, nor the embedding model chat.
		if status, _, _ := fakePost(t, srv.URL, "/v1beta/models/"+upstreamModelGemini+":batchEmbedContents", body, nil); status != 404 {
			t.Errorf("batchEmbedContents on the chat model: %d", status)
		}
		if status, _, _ := fakePost(t, srv.URL, "/v1beta/models/"+upstreamModelEmbedGemini+":batchEmbedContents", []byte(`{"requests":[]}`), nil); status != 400 {
			t.Errorf("no requests: %d", status)
		}
	})

	t.Run("titan", func(t *testing.T) {
		body, err := embeddings.TitanRequest(req, req.Inputs[0])
		if err != nil {
			t.Fatal(err)
		}
		path := "/model/amazon.titan-embed-text-v2%3A0/invoke" // escaped as the AWS SDKs do
		signed := http.Header{
			"Authorization": {"AWS4-HMAC-SHA256 Credential=" + bedrockAccessKey + "/20260101/" + bedrockRegion + "/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=00"},
			"X-Amz-Date":    {"20260101T000000Z"},
		}
		status, h, answer := fakePost(t, srv.URL, path, body, signed)
		if status != 200 {
			t.Fatalf("%d: %s", status, answer)
		}
		v, tokens, err := embeddings.TitanAnswer(answer)
		if err != nil {
			t.Fatal(err)
		}
		checkUnit(t, "vector", v, embedDimsTitan)
		if tokens != titanTokens || h.Get("X-Amzn-Bedrock-Input-Token-Count") != fmt.Sprint(titanTokens) {
			t.Errorf("tokens %d, header %q", tokens, h.Get("X-Amzn-Bedrock-Input-Token-Count"))
		}
		if status, _, _ := fakePost(t, srv.URL, path, body, nil); status != 403 {
			t.Errorf("unsigned: %d, want 403", status)
		}
		if status, _, _ := fakePost(t, srv.URL, path, []byte(`{"normalize":true}`), signed); status != 400 {
			t.Errorf("no inputText: %d, want 400", status)
		}
	})

	t.Run("verify", func(t *testing.T) {
		tg := &target{Name: "direct", BaseURL: srv.URL, client: newLoadClient()}
		defer tg.client.CloseIdleConnections()
		if _, err := verify(context.Background(), tg.client, newReqSpec(tg, w), w); err != nil {
			t.Errorf("direct: %v", err)
		}
		// A gateway's model name reaching the fake as it is fails the check.
		gw := &target{Name: "tollgate", BaseURL: srv.URL, client: tg.client, gateway: true}
		if _, err := verify(context.Background(), gw.client, newReqSpec(gw, w), w); err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("unrewritten model: %v", err)
		}
	})
}

func TestCheckEmbeddingsAnswer(t *testing.T) {
	item := func(i, dims int) string {
		return fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%s]}`, i, strings.TrimSuffix(strings.Repeat("0.5,", dims), ","))
	}
	list := func(n, dims int, usage string) string {
		var items []string
		for i := range n {
			items = append(items, item(i, dims))
		}
		return `{"object":"list","data":[` + strings.Join(items, ",") + `],"model":"m"` + usage + `}`
	}
	const usage = `,"usage":{"prompt_tokens":5,"total_tokens":5}`
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"good", list(16, 4, usage), true},
		{"15 items", list(15, 4, usage), false},
		{"short vectors", list(16, 3, usage), false},
		{"no usage", list(16, 4, ""), false},
		{"not a list", strings.Replace(list(16, 4, usage), `"list"`, `"embedding"`, 1), false},
		{"out of order", strings.Replace(list(16, 4, usage), `"index":3`, `"index":4`, 1), false},
		{"not JSON", `{"object":"list"`, false},
	} {
		if err := checkEmbeddingsAnswer([]byte(c.body), 4); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestQuickRunEmbeddings runs the embeddings workloads through every lane,
// next to chat's small, for two rounds: every request is answered, and
// the lane ratios are reported.
func TestQuickRunEmbeddings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	if testing.Short() {
		t.Skip("builds the gateway and benchmarks it: go test without -short runs it")
	}
	rep, log := quickRun(t, "-quick", "-targets", "direct,reverseproxy,tollgate", "-rounds", "2", "-workloads",
		"small,embeddings,embeddings-gemini,embeddings-bedrock", "-c", "4")
	// small and embeddings on all three, the translated ones on tollgate.
	if len(rep.Results) != 2*3+2 {
		t.Fatalf("got %d results, want 8:\n%s", len(rep.Results), log.String())
	}
	for _, r := range rep.Results {
		proxy := r.Target != "direct"
		if r.Error != "" || r.Errors != 0 || r.ErrorsConc != 0 || r.Requests == 0 || proxy && r.CPUPerReqUS <= 0 {
			t.Errorf("%s/%s: error %q, %d+%d errors (%s), %d requests, CPU/req %v", r.Workload, r.Target, r.Error,
				r.Errors, r.ErrorsConc, r.FirstError, r.Requests, r.CPUPerReqUS)
		}
		if strings.HasPrefix(r.Workload, "embeddings-") && r.Target != "tollgate" {
			t.Errorf("%s measured on %s", r.Workload, r.Target)
		}
	}
	var got []string
	for _, lr := range rep.Lanes {
		got = append(got, lr.Target+":"+lr.Workload+"/"+lr.Versus)
		if len(lr.Rounds) != 2 || lr.Median <= 0 {
			t.Errorf("%+v", lr)
		}
	}
	want := []string{"reverseproxy:embeddings/small", "tollgate:embeddings/small",
		"tollgate:embeddings-gemini/embeddings", "tollgate:embeddings-bedrock/embeddings"}
	if !slices.Equal(got, want) {
		t.Errorf("lane ratios %v, want %v", got, want)
	}
	if !slices.ContainsFunc(rep.Ratios, func(r Ratio) bool {
		return r.Workload == "embeddings" && r.Name == "CPU/req tollgate ÷ reverseproxy" && r.Value != nil
	}) {
		t.Errorf("no CPU ratio of tollgate to reverseproxy on embeddings: %+v", rep.Ratios)
	}
}
