package openai

import (
	"math"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/tollgate/tollgate/internal/meter"
)

// The usage of OpenAI's endpoints other than chat, read from their
// answers (and, for speech, from the request): tokens where the answer
// reports them, and the units the endpoint is billed in besides.

// ImagesUsage reads an images answer (/v1/images/generations, /edits):
// the images made, and the tokens of the models that report them
// (gpt-image-1: input_tokens, output_tokens, input_tokens_details).
func ImagesUsage(u *meter.Usage, body []byte) {
	r := gjson.ParseBytes(body)
	if n := len(r.Get("data").Array()); n > 0 {
		u.Units, u.Unit = int64(n), meter.UnitImage
	}
	tokenUsage(u, r.Get("usage"))
}

// TranscriptionUsage reads a transcription or translation answer in JSON
// (response_format json or verbose_json): usage of type tokens
// (gpt-4o-transcribe) or duration (whisper-1), else the verbose answer's
// duration; seconds are rounded up. Text, SRT and VTT answers report
// nothing.
func TranscriptionUsage(u *meter.Usage, body []byte) {
	r := gjson.ParseBytes(body)
	if !r.IsObject() {
		return
	}
	usage := r.Get("usage")
	switch usage.Get("type").Str {
	case "tokens":
		tokenUsage(u, usage)
		return
	case "duration":
		u.Units, u.Unit = seconds(usage.Get("seconds").Float()), meter.UnitSecond
		return
	}
	if d := r.Get("duration"); d.Type == gjson.Number {
		u.Units, u.Unit = seconds(d.Float()), meter.UnitSecond
	}
}

// RerankUsage reads a rerank answer: Cohere's billed search units
// (meta.billed_units.search_units), or the tokens Jina and vLLM report
// (usage.total_tokens, as input).
func RerankUsage(u *meter.Usage, body []byte) {
	r := gjson.ParseBytes(body)
	if n := r.Get("meta.billed_units.search_units").Int(); n > 0 {
		u.Units, u.Unit = n, meter.UnitQuery
	}
	if n := r.Get("usage.total_tokens").Int(); n > 0 {
		u.Input = n
	}
}

// SpeechCharacters counts the characters of a speech request's input
// (/v1/audio/speech), which text-to-speech models are billed by.
func SpeechCharacters(u *meter.Usage, request []byte) {
	if in := gjson.GetBytes(request, "input"); in.Type == gjson.String {
		u.Units, u.Unit = int64(utf8.RuneCountInString(in.Str)), meter.UnitCharacter
	}
}

// tokenUsage reads a usage object of input_tokens and output_tokens (the
// images and audio endpoints'), or Chat Completions' names.
func tokenUsage(u *meter.Usage, usage gjson.Result) {
	if !usage.IsObject() {
		return
	}
	units, unit := u.Units, u.Unit
	SetUsage(u, usage.Raw)
	u.Units, u.Unit = units, unit
}

// seconds rounds a duration up to whole seconds.
func seconds(s float64) int64 {
	if !(s > 0) || s > math.MaxInt32 {
		return 0
	}
	return int64(math.Ceil(s))
}
