package dialect

import (
	"bytes"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/tollgate/tollgate/internal/api/anthropic"
)

var syntheticMarker = []byte(anthropic.SyntheticSignaturePrefix)

// stripSyntheticThinking removes, from a Messages request bound for a real
// Anthropic upstream, the thinking blocks whose signature tollgate made
// (for reasoning that came from an OpenAI-compatible model): Anthropic
// would reject them as invalid signatures. If thinking is enabled and the
// last assistant turn that called tools thereby loses its leading thinking
// block, thinking is turned off for this request, as Anthropic requires
// such a turn to start with one. The body is only touched when a
// synthetic signature is present; removed reports whether it was.
func stripSyntheticThinking(body []byte) (out []byte, removed bool) {
	if !bytes.Contains(body, syntheticMarker) {
		return body, false
	}
	type loc struct{ msg, block int }
	var drop []loc
	lastToolTurn, lastToolTurnLosesLead := -1, false
	msgs := gjson.GetBytes(body, "messages").Array()
	for i, m := range msgs {
		if m.Get("role").String() != "assistant" {
			continue
		}
		blocks := m.Get("content").Array()
		hasTool := false
		for j, b := range blocks {
			switch b.Get("type").String() {
			case "thinking":
				if anthropic.IsSyntheticSignature(b.Get("signature").String()) {
					drop = append(drop, loc{i, j})
				}
			case "tool_use":
				hasTool = true
			}
		}
		if hasTool {
			lastToolTurn = i
			lastToolTurnLosesLead = len(blocks) > 0 && len(drop) > 0 && drop[len(drop)-1] == loc{i, 0}
		}
	}
	if len(drop) == 0 {
		return body, false
	}
	out = bytes.Clone(body)
	for k := len(drop) - 1; k >= 0; k-- { // from the end, so earlier indexes stay valid
		path := "messages." + strconv.Itoa(drop[k].msg) + ".content." + strconv.Itoa(drop[k].block)
		var err error
		if out, err = sjson.DeleteBytes(out, path); err != nil {
			return body, false
		}
	}
	if lastToolTurn >= 0 && lastToolTurnLosesLead && gjson.GetBytes(out, "thinking.type").String() != "disabled" && gjson.GetBytes(out, "thinking").Exists() {
		if o, err := sjson.DeleteBytes(out, "thinking"); err == nil {
			out = o
		}
	}
	return out, true
}
