package translate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/jsonx"
)

// Mid-conversation system messages.
//
// Anthropic clients (Claude Code among them) send {"role":"system"} entries
// inside messages: instructions that apply from that point on. Chat
// Completions has system messages anywhere in the conversation, so such an
// entry becomes a system message at the same place. Two exceptions:
//
//   - An entry that arrives after an assistant turn with tool calls and
//     before the user turn with their results follows the tool messages:
//     OpenAI wants the tool messages right after the calls.
//   - Upstreams whose chat template takes one leading system message only
//     (Caps.LeadingSystemOnly) get the text folded into a user turn
//     instead (foldSystemMessages).
//
// An entry with clear_at "next_user_message" is shown to the model only
// until a later user turn exists; after that it is left out, as Anthropic
// does.
//
// The other way, Chat system and developer messages join the top-level
// system prompt wherever they stand, which every Anthropic model takes; on
// models that take mid-conversation system messages (Caps.SystemMessages)
// the later ones stay in the conversation instead (placeSystemMessages).

// messageMembers reports members of messages[i] the translation does not
// carry: a message-wide cache breakpoint, a system message's per-turn
// output_config, members it does not know.
func messageMembers(i int, m anthropic.Message, p *Plan) error {
	if len(m.CacheControl) > 0 {
		if err := p.advisory("cache_control", "the upstream has no prompt-cache breakpoints"); err != nil {
			return err
		}
	}
	if len(m.Extra) == 0 {
		return nil
	}
	var members map[string]jsontext.Value
	if err := jsonx.Unmarshal(m.Extra, &members); err != nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(members)) {
		path := fmt.Sprintf("messages[%d].%s", i, k)
		var err error
		switch k {
		case "clear_at": // read by m2cSystemMessage
		case "output_config":
			err = p.advisoryAt(path, k, "per-turn settings of a system message cannot be sent to this model's upstream")
		default:
			err = p.advisoryAt(path, k, "unknown message member, not translated")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// m2cSystemMessage converts the system entry msgs[i] into a Chat system
// message, or nil when it has no text or is no longer shown to the model.
// System entries take text only: Anthropic refuses anything else, and so
// does tollgate, naming the block.
func m2cSystemMessage(msgs []anthropic.Message, i int, p *Plan) (*openai.ChatMessage, error) {
	m := msgs[i]
	var texts []string
	for j, b := range m.Content.Blocks {
		path := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch b.Type {
		case "text":
		case "tool_addition", "tool_removal":
			if err := p.contract(path, toolChangeRefusal); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, badRequest(path, "%s: system messages take text blocks only, got %q", path, b.Type)
		}
		if len(b.CacheControl) > 0 {
			if err := p.advisory("cache_control", "the upstream has no prompt-cache breakpoints"); err != nil {
				return nil, err
			}
		}
		if b.Text != "" {
			texts = append(texts, b.Text)
		}
	}
	if clearedAt(m, msgs[i+1:]) || len(texts) == 0 {
		return nil, nil
	}
	// Blocks stay separate paragraphs, as in the top-level system prompt.
	return &openai.ChatMessage{Role: "system", Content: textContent(strings.Join(texts, "\n\n"))}, nil
}

// clearedAt reports whether a system message with clear_at
// "next_user_message" has a user turn after it, which hides it.
func clearedAt(m anthropic.Message, later []anthropic.Message) bool {
	if len(m.Extra) == 0 {
		return false
	}
	var v struct {
		ClearAt string `json:"clear_at"`
	}
	if jsonx.Unmarshal(m.Extra, &v) != nil || v.ClearAt != "next_user_message" {
		return false
	}
	return slices.ContainsFunc(later, func(l anthropic.Message) bool { return l.Role == "user" })
}

// awaitingToolResults reports whether the conversation so far ends in an
// assistant turn whose tool calls have not been answered yet.
func awaitingToolResults(out []openai.ChatMessage) bool {
	n := len(out)
	return n > 0 && out[n-1].Role == "assistant" && len(out[n-1].ToolCalls) > 0
}

// foldSystemMessages rewrites a translated conversation for an upstream
// that takes one system message, at the start (Caps.LeadingSystemOnly):
//
//   - the leading system messages become one, paragraphs in order;
//   - a later system message's text opens the user message right after it;
//   - when no user message follows directly (an assistant or tool message
//     does, or nothing), the text closes the user message right before it,
//     or becomes a user message of its own at the same place.
//
// The text is moved verbatim, without tags or labels added, and user
// messages that end up next to each other are merged (such templates also
// want turns to alternate).
func foldSystemMessages(msgs []openai.ChatMessage) []openai.ChatMessage {
	out := make([]openai.ChatMessage, 0, len(msgs))
	i := 0
	var lead []string
	for ; i < len(msgs) && msgs[i].Role == "system"; i++ {
		lead = append(lead, msgs[i].Content.Text)
	}
	if len(lead) > 0 {
		out = append(out, openai.ChatMessage{Role: "system", Content: textContent(strings.Join(lead, "\n\n"))})
	}
	var pending []openai.Part // folded system text not placed yet
	for _, m := range msgs[i:] {
		switch {
		case m.Role == "system":
			pending = append(pending, openai.Part{Type: "text", Text: m.Content.Text})
			continue
		case m.Role == "user":
			if len(pending) > 0 {
				m.Content = openai.MessageContent{Parts: append(pending, contentParts(m.Content)...)}
				pending = nil
			}
			out = appendUser(out, contentParts(m.Content))
			continue
		}
		if len(pending) > 0 {
			out = appendUser(out, pending)
			pending = nil
		}
		out = append(out, m)
	}
	if len(pending) > 0 {
		out = appendUser(out, pending)
	}
	return out
}

// contentParts returns message content as parts.
func contentParts(c openai.MessageContent) []openai.Part {
	if c.IsString {
		return []openai.Part{{Type: "text", Text: c.Text}}
	}
	return c.Parts
}

// laterSystem is a system or developer message of an OpenAI conversation
// that came after pos Anthropic messages had been made.
type laterSystem struct {
	pos    int
	blocks []anthropic.Block
}

// placeSystemMessages puts the later system messages of an OpenAI
// conversation into the Anthropic one, obeying Anthropic's placement rules:
// a system message must directly follow a user message, be last or be
// followed by an assistant turn, and not touch another system message.
// msgs alternate user and assistant, so a system message fits right after
// any user message:
//
//   - after a user message it stays where it is;
//   - after an assistant message it moves past the user message that
//     follows (the instruction still comes before the next answer);
//   - after a final assistant message (a prefill) it moves before it;
//   - with no user message to follow it joins the top-level system.
//
// Messages bound for the same place are merged into one.
func placeSystemMessages(msgs []anthropic.Message, later []laterSystem, sys []anthropic.Block) ([]anthropic.Message, []anthropic.Block) {
	if len(later) == 0 {
		return msgs, sys
	}
	isUser := func(k int) bool { return k >= 0 && k < len(msgs) && msgs[k].Role == "user" }
	at := map[int][]anthropic.Block{} // insert after msgs[slot-1]
	for _, l := range later {
		if len(l.blocks) == 0 {
			continue
		}
		pos := min(l.pos, len(msgs))
		switch {
		case isUser(pos - 1):
		case isUser(pos):
			pos++
		case isUser(pos - 2):
			pos--
		default:
			sys = append(sys, l.blocks...)
			continue
		}
		at[pos] = append(at[pos], l.blocks...)
	}
	out := make([]anthropic.Message, 0, len(msgs)+len(at))
	for k, m := range msgs {
		out = append(out, m)
		if blocks, ok := at[k+1]; ok {
			out = append(out, anthropic.Message{Role: "system", Content: anthropic.Content{Blocks: blocks}})
		}
	}
	return out, sys
}
