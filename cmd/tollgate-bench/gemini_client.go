package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// geminiAnswer is what a Gemini API client reads of an answer or of one
// stream event.
type geminiAnswer struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	Error json.RawMessage `json:"error"`
}

// text is the first candidate's text.
func (a *geminiAnswer) text() string {
	if len(a.Candidates) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range a.Candidates[0].Content.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (a *geminiAnswer) finishReason() string {
	if len(a.Candidates) == 0 {
		return ""
	}
	return a.Candidates[0].FinishReason
}

// wholeAnswerText and streamedText are the texts the fake upstream
// answers with, in every protocol: a gateway must hand them on unchanged.
var (
	wholeAnswerText, _ = strconv.Unquote(answerText)
	streamedText       = func() string {
		var b strings.Builder
		for i := range streamContentEvents {
			b.WriteString(benchWords[i%len(benchWords)] + " ")
		}
		return b.String()
	}()
)

// checkGeminiAnswer checks a generateContent answer: a candidate with the
// upstream's text and a finish reason.
func checkGeminiAnswer(body []byte) error {
	var a geminiAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("response is not JSON: %v: %s", err, truncate(string(body), 200))
	}
	if len(a.Candidates) == 0 || a.finishReason() == "" {
		return fmt.Errorf("not a Gemini answer with a finished candidate: %s", truncate(string(body), 200))
	}
	if got := a.text(); got != wholeAnswerText {
		return fmt.Errorf("candidate text %q, want the upstream's %q", truncate(got, 80), truncate(wholeAnswerText, 80))
	}
	return nil
}

// checkGeminiStream checks a streamGenerateContent?alt=sse answer: events
// whose parts add up to the upstream's text, and a finish reason. How the
// text is cut into events is the gateway's choice (a translation may join
// or split deltas); a count other than the upstream's is a warning.
func checkGeminiStream(body []byte) (warn string, err error) {
	var text strings.Builder
	var parts int
	var finish string
	err = eachSSEData(body, func(data string) error {
		var ev geminiAnswer
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("bad SSE data line %q: %v", truncate(data, 120), err)
		}
		if len(ev.Error) > 0 {
			return fmt.Errorf("stream ended in an error: %s", truncate(string(ev.Error), 200))
		}
		if t := ev.text(); t != "" {
			parts++
			text.WriteString(t)
		}
		if f := ev.finishReason(); f != "" {
			finish = f
		}
		return nil
	})
	switch {
	case err != nil:
		return "", err
	case parts == 0:
		return "", errors.New("stream had no text parts")
	case text.String() != streamedText:
		return "", fmt.Errorf("streamed text %q, want the upstream's %q", truncate(text.String(), 80), truncate(streamedText, 80))
	case finish == "":
		return "", errors.New("stream did not end with a finish reason")
	case parts != streamContentEvents:
		warn = fmt.Sprintf("%d events with text, the upstream sent %d", parts, streamContentEvents)
	}
	return warn, nil
}
