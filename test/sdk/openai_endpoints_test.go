package sdk_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/tollgate/tollgate/internal/gatewaytest"
	"github.com/tollgate/tollgate/internal/upstreamtest"
)

const openAIEndpointsConfig = `
providers:
  - { name: oai, type: openai, base_url: %q, api_key: %q }
models:
  - { name: instruct, targets: [ { provider: oai, model: gpt-3.5-turbo-instruct } ], pricing: { input: "1.50", output: "2" } }
  - { name: moderation, targets: [ { provider: oai, model: omni-moderation-latest } ], pricing: { input: "0", output: "0" } }
  - { name: dalle, targets: [ { provider: oai, model: dall-e-3 } ], pricing: { per_image: "0.04" } }
  - { name: tts, targets: [ { provider: oai, model: tts-1 } ], pricing: { per_character: "0.000015" } }
`

// openai-go's completions, moderations, image generation and speech
// through the gateway, each recorded with its usage and cost.
func TestOpenAIOtherEndpoints(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, func(r upstreamtest.Received) upstreamtest.Reply {
		if r.Header.Get("Authorization") != "Bearer "+upstreamKey {
			return upstreamtest.Reply{Status: 401, Body: []byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)}
		}
		return upstreamtest.OpenAIEndpoints(r)
	})
	base := gatewaytest.StartDB(t, fmt.Sprintf(openAIEndpointsConfig, up.URL+"/v1", upstreamKey), masterKey)
	client := openAIClient(base)
	ctx := callContext(t)

	cmpl, err := client.Completions.New(ctx, openai.CompletionNewParams{Model: "instruct",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hello")}, MaxTokens: openai.Int(7)})
	if err != nil || cmpl.Choices[0].Text != " world" || cmpl.Usage.PromptTokens != 5 || cmpl.Usage.CompletionTokens != 7 {
		t.Errorf("completion: %v %+v", err, cmpl)
	}
	// Streamed: the gateway asks for the usage chunk the client did not,
	// and keeps it from the client.
	stream := client.Completions.NewStreaming(ctx, openai.CompletionNewParams{Model: "instruct",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hello")}})
	var text string
	chunks := 0
	for stream.Next() {
		c := stream.Current()
		chunks++
		if len(c.Choices) > 0 {
			text += c.Choices[0].Text
		}
		if c.Usage.TotalTokens != 0 {
			t.Errorf("a usage chunk reached the client: %+v", c.Usage)
		}
	}
	if err := stream.Err(); err != nil || text != " hello world" || chunks != 3 {
		t.Errorf("streamed completion: %v %q in %d chunks", err, text, chunks)
	}
	mod, err := client.Moderations.New(ctx, openai.ModerationNewParams{Model: "moderation",
		Input: openai.ModerationNewParamsInputUnion{OfString: openai.String("some text")}})
	if err != nil || len(mod.Results) != 1 || mod.Results[0].Flagged {
		t.Errorf("moderation: %v %+v", err, mod)
	}
	img, err := client.Images.Generate(ctx, openai.ImageGenerateParams{Model: "dalle", Prompt: "a cat", N: openai.Int(2)})
	if err != nil || len(img.Data) != 2 || img.Data[0].B64JSON != "aW1hZ2U=" {
		t.Errorf("images: %v %+v", err, img)
	}
	speech, err := client.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: "tts", Input: "Hello there", Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")}})
	if err != nil {
		t.Fatalf("speech: %v", err)
	}
	audio, _ := io.ReadAll(speech.Body)
	speech.Body.Close()
	if !bytes.Equal(audio, upstreamtest.SpeechAudio) {
		t.Errorf("speech: %q", audio)
	}

	want := map[string]struct {
		input, output float64
		units         float64
		cost          float64
	}{
		"/v1/completions":        {5, 7, 0, 5*1500 + 7*2000}, // and the stream's 5 and 2: checked below
		"/v1/moderations":        {0, 0, 0, 0},
		"/v1/images/generations": {0, 0, 2, 80_000_000},
		"/v1/audio/speech":       {0, 0, 11, 11 * 15000},
	}
	records := ledgerRecords(t, base)
	for _, r := range records {
		if r["endpoint"] == "/v1/completions" && r["stream"] == true {
			if tokens := r["tokens"].(map[string]any); tokens["input"] != 5.0 || tokens["output"] != 2.0 || r["cost_nano_usd"] != 5*1500+2*2000.0 {
				t.Errorf("the streamed completion's record: %v", r)
			}
			continue
		}
		w, ok := want[r["endpoint"].(string)]
		if !ok {
			t.Errorf("unexpected record %v", r)
			continue
		}
		tokens := r["tokens"].(map[string]any)
		units, _ := r["units"].(float64)
		if tokens["input"] != w.input || tokens["output"] != w.output || units != w.units || r["cost_nano_usd"] != w.cost {
			t.Errorf("%s: tokens %v units %v cost %v, want %+v", r["endpoint"], tokens, units, r["cost_nano_usd"], w)
		}
		delete(want, r["endpoint"].(string))
	}
	if len(want) > 0 {
		t.Errorf("no record of %v", want)
	}
}

// openai-go's transcription, translation and image edit (multipart
// uploads) through the gateway: the file arrives whole, the model is the
// target's.
func TestOpenAIUploads(t *testing.T) {
	t.Parallel()
	up := upstreamtest.NewForms()
	t.Cleanup(up.Close)
	base := gatewaytest.StartDB(t, fmt.Sprintf(`
providers:
  - { name: oai, type: openai, base_url: %q, api_key: %q }
models:
  - { name: whisper, targets: [ { provider: oai, model: whisper-1 } ], pricing: { per_second: "0.0001" } }
  - { name: image-edit, targets: [ { provider: oai, model: gpt-image-1 } ], pricing: { input: "5", output: "40" } }
`, up.URL+"/v1", upstreamKey), masterKey)
	client := openAIClient(base)
	ctx := callContext(t)
	audio := bytes.Repeat([]byte("RIFF....WAVEfmt "), 10_000) // 160 kB: ten seconds to the fake
	tr, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{Model: "whisper",
		File: openai.File(bytes.NewReader(audio), "speech.wav", "audio/wav")})
	if err != nil || tr.Text != "Hello from the audio." {
		t.Errorf("transcription: %v %+v", err, tr)
	}
	tl, err := client.Audio.Translations.New(ctx, openai.AudioTranslationNewParams{Model: "whisper",
		File: openai.File(bytes.NewReader(audio), "speech.wav", "audio/wav")})
	if err != nil || tl.Text != "Hello from the audio." {
		t.Errorf("translation: %v %+v", err, tl)
	}
	img, err := client.Images.Edit(ctx, openai.ImageEditParams{Model: "image-edit", Prompt: "add a hat",
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(audio[:4096]), "cat.png", "image/png")}})
	if err != nil || len(img.Data) != 1 || img.Usage.OutputTokens != 1056 {
		t.Errorf("image edit: %v %+v", err, img)
	}
	reqs := up.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d upstream requests", len(reqs))
	}
	for i, want := range []struct {
		path, model string
		size        int64
	}{{"/v1/audio/transcriptions", "whisper-1", int64(len(audio))}, {"/v1/audio/translations", "whisper-1", int64(len(audio))}, {"/v1/images/edits", "gpt-image-1", 4096}} {
		if r := reqs[i]; r.Path != want.path || r.Fields["model"] != want.model || r.FileSize != want.size {
			t.Errorf("upstream request %d: %s model %q file %d bytes", i, r.Path, r.Fields["model"], r.FileSize)
		}
	}
	for _, r := range ledgerRecords(t, base) {
		units, _ := r["units"].(float64)
		if strings.HasPrefix(r["endpoint"].(string), "/v1/audio/") && (units != 10 || r["unit"] != "second" || r["cost_nano_usd"] != 1_000_000.0) {
			t.Errorf("record %v", r)
		}
	}
}
