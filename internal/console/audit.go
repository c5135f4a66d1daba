package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/store"
)

// auditPage is how many events the audit page shows at once.
const auditPage = 50

// audit pages the audit log, newest first, filtered by actor and action;
// "before" (an event id) is the cursor to older events.
func (c *Console) audit(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	f := store.AuditFilter{ActorID: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")), Limit: auditPage + 1}
	data := map[string]any{"Actor": f.ActorID, "Action": f.Action}
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			data["Error"] = "before: want an event number"
			c.render(w, r, http.StatusBadRequest, "audit", v, data)
			return
		}
		f.Before = n
	}
	events, err := c.o.Store.Audit(r.Context(), f)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	if len(events) > auditPage {
		events = events[:auditPage]
		next := url.Values{}
		for k, vs := range q {
			next[k] = vs
		}
		next.Set("before", strconv.FormatInt(events[len(events)-1].ID, 10))
		data["Next"] = "/console/audit?" + next.Encode()
	}
	type row struct {
		store.AuditEvent
		Detail string
	}
	rows := make([]row, len(events))
	for i, e := range events {
		rows[i] = row{AuditEvent: e, Detail: prettyJSON(e.Detail)}
	}
	data["Events"] = rows
	c.render(w, r, http.StatusOK, "audit", v, data)
}
