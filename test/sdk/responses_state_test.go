package sdk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

// Stored responses through openai-go: a response is kept (store defaults
// to true), read back, listed, continued with previous_response_id on a
// translated lane and on a Responses upstream, and deleted; another key
// sees none of it.
func TestResponsesSDKStoredResponses(t *testing.T) {
	t.Parallel()
	ant := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	oair := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("responses.json")})
	base := gatewaytest.StartDB(t, responsesConfig(oair, ant, nil), masterKey)
	client := openAIClient(base)
	ctx := callContext(t)

	first, err := client.Responses.New(ctx, responsesParams("claude-test"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != first.ID || got.OutputText() != first.OutputText() || got.Status != responses.ResponseStatusCompleted {
		t.Errorf("stored response: %s", got.RawJSON())
	}
	items, err := client.Responses.InputItems.List(ctx, first.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(err)
	}
	if len(items.Data) != 2 || items.Data[0].ID == "" || len(items.Data[1].AsMessage().Content) != 1 ||
		items.Data[1].AsMessage().Content[0].Text != "list the files" {
		t.Errorf("input items: %s", items.RawJSON())
	}

	// A continuation on the translated lane gets the whole conversation.
	next := responses.ResponseNewParams{Model: "claude-test", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("and the hidden ones?")}}
	second, err := client.Responses.New(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	body := string(ant.Requests()[1].Body)
	for _, want := range []string{`"text":"list the files"`, `"text":"Hi! <b>&</b> How can I help?"`, `"text":"and the hidden ones?"`,
		`"signature":"EqQBCgIYAhIMsig=="`} {
		if !strings.Contains(body, want) {
			t.Errorf("continued request lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "previous_response_id") {
		t.Errorf("the id went to an upstream that does not know it: %s", body)
	}
	// ...and the continuation's own input items are the whole conversation.
	items, err = client.Responses.InputItems.List(ctx, second.ID, responses.InputItemListParams{})
	if err != nil || len(items.Data) != 5 {
		t.Fatalf("continuation's input items: %v %s", err, items.RawJSON())
	}

	// On the Responses upstream that stored a response itself, the id is
	// forwarded; anywhere else the conversation is expanded.
	passed, err := client.Responses.New(ctx, responsesParams("codex-test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "codex-test", PreviousResponseID: openai.String(passed.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("go on")}}); err != nil {
		t.Fatal(err)
	}
	if b := string(oair.Requests()[1].Body); !strings.Contains(b, `"previous_response_id":"`+passed.ID+`"`) || strings.Contains(b, "list the files") {
		t.Errorf("continuation on the same Responses target: %s", b)
	}
	if _, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "codex-test", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("go on")}}); err != nil {
		t.Fatal(err)
	}
	if b := string(oair.Requests()[2].Body); strings.Contains(b, "previous_response_id") || !strings.Contains(b, "list the files") {
		t.Errorf("continuation of a Claude response on a Responses target: %s", b)
	}

	// store: false keeps nothing.
	unstored := responsesParams("claude-test")
	unstored.Store = openai.Bool(false)
	r, err := client.Responses.New(ctx, unstored)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); !isStatus(err, 404) {
		t.Errorf("a store:false response was found: %v", err)
	}

	// Another key sees none of it, and cannot continue it.
	other := openAIClient(base, option.WithAPIKey(createKey(t, base)))
	if _, err := other.Responses.Get(ctx, first.ID, responses.ResponseGetParams{}); !isStatus(err, 404) {
		t.Errorf("another key read the response: %v", err)
	}
	if _, err := other.Responses.New(ctx, next); !isStatus(err, 404) {
		t.Errorf("another key continued the response: %v", err)
	}
	if err := other.Responses.Delete(ctx, first.ID); !isStatus(err, 404) {
		t.Errorf("another key deleted the response: %v", err)
	}

	if err := client.Responses.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.Get(ctx, first.ID, responses.ResponseGetParams{}); !isStatus(err, 404) {
		t.Errorf("a deleted response was found: %v", err)
	}
	if _, err := client.Responses.New(ctx, next); !isStatus(err, 404) {
		t.Errorf("a deleted response was continued: %v", err)
	}
}

// A stream is kept when its terminal event goes by, before the client
// gets it: a continuation sent at once finds it.
func TestResponsesSDKStoredStream(t *testing.T) {
	t.Parallel()
	ant := staticUpstream(t, upstreamtest.Reply{Events: upstreamtest.Events("anthropic_stream.sse")})
	client := openAIClient(gatewaytest.StartDB(t, responsesConfig(nil, ant, nil), masterKey))
	ctx := callContext(t)
	got := readResponsesStream(t, client.Responses.NewStreaming(ctx, responsesParams("claude-test")))
	if got.final == nil {
		t.Fatal("no response.completed")
	}
	stored, err := client.Responses.Get(ctx, got.final.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Output) != 3 || stored.Output[2].AsFunctionCall().Name != "get_weather" {
		t.Errorf("stored: %s", stored.RawJSON())
	}
}

// createKey makes a virtual key through the admin API.
func createKey(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/admin/keys", bytes.NewReader([]byte(`{"name":"other"}`)))
	req.Header.Set("Authorization", "Bearer "+masterKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var k struct{ Key string }
	if err := json.NewDecoder(resp.Body).Decode(&k); err != nil || k.Key == "" {
		t.Fatalf("creating a key: %v (status %d)", err, resp.StatusCode)
	}
	return k.Key
}

func isStatus(err error, status int) bool {
	var apiErr *openai.Error
	return errors.As(err, &apiErr) && apiErr.StatusCode == status
}

// input_items pages as OpenAI's list does; bad parameters and methods get
// clear errors in the OpenAI envelope.
func TestResponsesInputItemsPaging(t *testing.T) {
	t.Parallel()
	ant := staticUpstream(t, upstreamtest.Reply{Body: upstreamtest.File("anthropic_message.json")})
	base := gatewaytest.StartDB(t, responsesConfig(nil, ant, nil), masterKey)
	client := openAIClient(base)
	ctx := callContext(t)
	params := responsesParams("claude-test")
	params.Input.OfInputItemList = append(params.Input.OfInputItemList,
		responses.ResponseInputItemParamOfMessage("two", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfMessage("three", responses.EasyInputMessageRoleUser))
	r, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	after := ""
	for range 10 {
		p := responses.InputItemListParams{Limit: openai.Int(1), Order: responses.InputItemListParamsOrderAsc}
		if after != "" {
			p.After = openai.String(after)
		}
		page, err := client.Responses.InputItems.List(ctx, r.ID, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 1 {
			t.Fatalf("page: %s", page.RawJSON())
		}
		seen = append(seen, page.Data[0].AsMessage().Content[0].Text)
		if !page.HasMore {
			break
		}
		after = page.Data[0].ID
	}
	if strings.Join(seen, ",") != "Be brief.,list the files,two,three" {
		t.Errorf("paged items: %q", seen)
	}
	desc, err := client.Responses.InputItems.List(ctx, r.ID, responses.InputItemListParams{})
	if err != nil || len(desc.Data) != 4 || desc.Data[0].AsMessage().Content[0].Text != "three" {
		t.Errorf("default order: %v %s", err, desc.RawJSON())
	}
	for _, tc := range []struct {
		method, path string
		status       int
		want         string
	}{
		{"GET", "/v1/responses/" + r.ID + "/input_items?limit=0", 400, `"param":"limit"`},
		{"GET", "/v1/responses/" + r.ID + "/input_items?order=up", 400, `"param":"order"`},
		{"GET", "/v1/responses/" + r.ID + "/input_items?after=nope", 400, `"param":"after"`},
		{"POST", "/v1/responses/" + r.ID, 405, `use GET or DELETE`},
		{"GET", "/v1/responses/resp_nope", 404, `not found`},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+masterKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(b.String(), tc.want) || !strings.Contains(b.String(), `{"error":{`) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, resp.StatusCode, b.String())
		}
	}
}
