package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollgate/tollgate/internal/units"
)

// pageNames are the templates, each rendered inside layout.html.
var pageNames = []string{"signin", "error", "overview", "usage", "requests", "request", "keys", "key", "routes", "limits",
	"users", "user", "teams", "team", "audit", "sessions"}

// titles are the pages whose title is not their name capitalised.
var titles = map[string]string{"signin": "Sign in", "audit": "Audit log", "sessions": "Agent sessions"}

var funcs = template.FuncMap{
	"usd":      usd,
	"usdPtr":   usdPtr,
	"num":      num,
	"ms":       func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " ms" },
	"pct":      func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" },
	"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
	"whenPtr":  whenPtr,
	"join":     strings.Join,
	"orDash":   func(s string) string { return cmpOr(s, "—") },
	"isMaster": func(v *viewer) bool { return v != nil && v.operator() },
	"isPerson": func(v *viewer) bool { return v != nil && v.KeyID == "" },
	"who":      who,
	"limits":   limitsText,
}

// lazyPage is one page's templates, parsed when it is first rendered:
// the console's pages hold some 0.7 MiB once parsed (1.1 MiB allocated
// to parse them), which a gateway whose console nobody opens, or opens
// at only a few pages, should not carry from its start.
type lazyPage struct {
	name string
	once sync.Once
	t    *template.Template
	err  error
}

func (p *lazyPage) template() (*template.Template, error) {
	p.once.Do(func() { p.t, p.err = parsePage(p.name) })
	return p.t, p.err
}

// newPages returns every page, none of them parsed yet.
func newPages() map[string]*lazyPage {
	pages := make(map[string]*lazyPage, len(pageNames))
	for _, name := range pageNames {
		pages[name] = &lazyPage{name: name}
	}
	return pages
}

// parsePage parses the named page inside the layout.
func parsePage(name string) (*template.Template, error) {
	t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
	if err != nil {
		return nil, fmt.Errorf("console template %s: %w", name, err)
	}
	return t, nil
}

// page is what every template gets.
type page struct {
	Title   string
	Nav     string // the current section
	Viewer  *viewer
	CSRF    string
	Data    any
	Refresh int // seconds between live refreshes of the content; 0 for none
}

// render writes the named page. A request from the console's script for
// live figures (X-Console-Fragment) gets the content alone.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, v *viewer, data any) {
	p := page{Title: cmpOr(titles[name], strings.ToUpper(name[:1])+name[1:]), Nav: name, Viewer: v, Data: data}
	if v != nil {
		p.CSRF = v.session.CSRF
	}
	if m, ok := data.(map[string]any); ok {
		if t, ok := m["Title"].(string); ok {
			p.Title = t
		}
		if n, ok := m["Refresh"].(int); ok {
			p.Refresh = n
		}
	}
	tmpl := "layout.html"
	if r.Header.Get("X-Console-Fragment") != "" {
		tmpl = "content"
	}
	var buf bytes.Buffer
	t, err := c.pages[name].template()
	if err == nil {
		err = t.ExecuteTemplate(&buf, tmpl, p)
	}
	if err != nil {
		c.o.Logger.Error("console: rendering", "page", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail renders an error page with a message for people.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v *viewer, status int, msg string) {
	c.render(w, r, status, "error", v, map[string]any{"Title": http.StatusText(status), "Message": msg})
}

// who names the viewer in the header.
func who(v *viewer) string {
	switch {
	case v.User != nil && v.Admin:
		return userName(*v.User) + " (operator)"
	case v.User != nil:
		return userName(*v.User)
	case v.Master:
		return "master key"
	}
	return "key " + v.KeyName
}

func usd(nano int64) string {
	if s, neg := strings.CutPrefix(units.FormatNano(nano, 2), "-"); neg {
		return "-$" + s // a cache saving: writes cost more than reads saved
	}
	return "$" + units.FormatNano(nano, 2)
}

// usdPtr renders a cost that may be unknown: unpriced usage is never 0.
func usdPtr(nano *int64, unpriced int64) string {
	switch {
	case nano == nil && unpriced > 0:
		return "unknown"
	case nano == nil:
		return usd(0)
	case unpriced > 0:
		return usd(*nano) + " + unknown"
	}
	return usd(*nano)
}

// num renders an integer with thin thousands separators.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func whenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
