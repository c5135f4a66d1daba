package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/admin"
)

// auditPage is how many events the audit page shows at once.
const auditPage = 50

// audit pages the audit log, newest first, filtered by actor and action;
// "before" (an event id) is the cursor to older events.
func (c *Console) audit(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	aq := admin.AuditQuery{ActorID: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")), Limit: auditPage}
	data := map[string]any{"Actor": aq.ActorID, "Action": aq.Action}
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			data["Error"] = "before: want an event number"
			c.render(w, r, http.StatusBadRequest, "audit", v, data)
			return
		}
		aq.Before = n
	}
	page, err := c.svc().Audit(r.Context(), aq)
	if err != nil {
		c.storeFailed(w, r, v, err)
		return
	}
	if page.HasMore && page.LastID != nil {
		next := url.Values{}
		for k, vs := range q {
			next[k] = vs
		}
		next.Set("before", strconv.FormatInt(*page.LastID, 10))
		data["Next"] = "/console/audit?" + next.Encode()
	}
	type row struct {
		admin.AuditEventView
		Actor, Target, Detail string
	}
	rows := make([]row, len(page.Data))
	for i, e := range page.Data {
		rows[i] = row{AuditEventView: e, Detail: prettyJSON(e.Detail)}
		if e.ActorID != nil {
			rows[i].Actor = *e.ActorID
		}
		if e.TargetID != nil {
			rows[i].Target = *e.TargetID
		}
	}
	data["Events"] = rows
	c.render(w, r, http.StatusOK, "audit", v, data)
}
