package translate

import (
	"github.com/tollgate/tollgate/internal/api/anthropic"
	"github.com/tollgate/tollgate/internal/api/openai"
	"github.com/tollgate/tollgate/internal/meter"
)

// finishReason maps an Anthropic stop_reason to an OpenAI finish_reason.
// pause_turn (a server-tool loop paused) has no OpenAI equivalent: "stop".
func finishReason(stop string, jsonTool bool) string {
	switch stop {
	case anthropic.StopMaxTokens, anthropic.StopContextWindow:
		return openai.FinishLength
	case anthropic.StopToolUse:
		if jsonTool {
			return openai.FinishStop // the tool's input is the answer
		}
		return openai.FinishToolCalls
	case anthropic.StopRefusal:
		return openai.FinishContentFilter
	default: // end_turn, stop_sequence, pause_turn, unknown
		return openai.FinishStop
	}
}

// stopReason maps an OpenAI finish_reason to an Anthropic stop_reason.
// Upstreams that answer "stop" after emitting tool calls still mean
// tool_use: an agent would otherwise never run the tool.
func stopReason(finish string, toolsEmitted, refused bool) string {
	if refused {
		return anthropic.StopRefusal
	}
	switch finish {
	case openai.FinishLength:
		return anthropic.StopMaxTokens
	case openai.FinishToolCalls, openai.FinishFunctionCall:
		return anthropic.StopToolUse
	case openai.FinishContentFilter:
		return anthropic.StopRefusal
	}
	if toolsEmitted {
		return anthropic.StopToolUse
	}
	return anthropic.StopEndTurn
}

// anthropicUsage renders usage in the Anthropic convention: input_tokens
// excludes cache reads and writes.
func anthropicUsage(u meter.Usage) anthropic.Usage {
	out := anthropic.Usage{
		InputTokens:              u.Input,
		CacheCreationInputTokens: u.CacheWrite5m + u.CacheWrite1h,
		CacheReadInputTokens:     u.CacheRead,
		OutputTokens:             u.Output,
	}
	if u.CacheWrite1h > 0 {
		out.CacheCreation = &anthropic.CacheCreation{Ephemeral5m: u.CacheWrite5m, Ephemeral1h: u.CacheWrite1h}
	}
	return out
}

// openAIUsage renders usage in the OpenAI convention: prompt_tokens
// includes cached tokens (and cache writes); completion_tokens includes
// reasoning.
func openAIUsage(u meter.Usage) *openai.Usage {
	prompt := u.TotalInput()
	out := &openai.Usage{
		PromptTokens:        prompt,
		CompletionTokens:    u.Output,
		TotalTokens:         prompt + u.Output,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite5m + u.CacheWrite1h},
	}
	if u.Reasoning > 0 {
		out.CompletionTokensDetails = &openai.CompletionTokensDetails{ReasoningTokens: u.Reasoning}
	}
	return out
}
