package claudecode_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"
)

// browser plays the developer at a web browser: it opens the page the CLI
// asked for, submits its form with the button that goes on, and follows
// redirects to the identity provider and back. Cookies go as browsers send
// them under SameSite: a Strict cookie never on a request that a
// cross-site page or redirect led to, a Lax one (the default) there only
// on a GET.
type browser struct {
	client *http.Client
	jar    *cookiejar.Jar

	mu       sync.Mutex
	sameSite map[string]http.SameSite // by host and cookie name
	history  []string                 // one line per request, for failure messages
}

func newBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{
		jar:      jar,
		sameSite: map[string]http.SameSite{},
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // followed by navigate, which knows the chain
		}},
	}
}

// page is a document the browser ended on.
type page struct {
	url  *url.URL
	body string
}

// open navigates to rawURL as if typed in the address bar, then submits
// the form it finds there, and returns the page the redirects end on.
func (b *browser) open(t *testing.T, rawURL string) (verification, final page) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("the CLI opened %q: %v", rawURL, err)
	}
	verification, redirected := b.navigate(t, http.MethodGet, u, nil, nil)
	if redirected {
		t.Fatalf("the verification page %s redirected at once: a pre-filled code must wait for the person to submit it\n%s", u, b.log())
	}
	method, action, form := b.form(t, verification)
	final, _ = b.navigate(t, method, action, form, verification.url)
	return verification, final
}

// navigate sends one top-level navigation and follows its redirects;
// initiator is the page it came from (nil when typed). It fails the test
// unless the chain ends on a 200 page; redirected says there was a hop.
func (b *browser) navigate(t *testing.T, method string, u *url.URL, form url.Values, initiator *url.URL) (page, bool) {
	t.Helper()
	var chain []string // the sites the navigation went through
	if initiator != nil {
		chain = append(chain, site(initiator))
	}
	for hop := 0; hop < 10; hop++ {
		if !loopback(u) {
			t.Fatalf("browser: sent to %s, off this machine\n%s", u, b.log())
		}
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(t.Context(), method, u.String(), body)
		if err != nil {
			t.Fatal(err)
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if initiator != nil {
			req.Header.Set("Referer", initiator.String())
		}
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) tollgate-test-browser")
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		crossSite := slices.ContainsFunc(chain, func(s string) bool { return s != site(u) })
		sent := b.cookies(req, crossSite)
		resp, err := b.client.Do(req)
		if err != nil {
			t.Fatalf("browser: %s %s: %v\n%s", method, u, err, b.log())
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.keep(u, resp)
		b.record(fmt.Sprintf("%s %s (cookies %v) -> %d %s", method, u, sent, resp.StatusCode, resp.Header.Get("Location")))
		switch resp.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			next, err := u.Parse(resp.Header.Get("Location"))
			if err != nil {
				t.Fatalf("browser: bad Location %q: %v\n%s", resp.Header.Get("Location"), err, b.log())
			}
			if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect {
				method, form = http.MethodGet, nil
			}
			chain = append(chain, site(u))
			u = next
			continue
		case http.StatusOK:
			return page{url: u, body: string(got)}, hop > 0
		}
		t.Fatalf("browser: %s %s answered %d:\n%s\n%s", method, u, resp.StatusCode, got, b.log())
	}
	t.Fatalf("browser: more than 10 redirects\n%s", b.log())
	return page{}, false
}

// site is what SameSite compares: the scheme and the host (an IP address
// or a name such as localhost has no registrable domain above it).
func site(u *url.URL) string { return u.Scheme + "://" + u.Hostname() }

// cookies adds to req the cookies a browser would send and names them.
func (b *browser) cookies(req *http.Request, crossSite bool) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var names []string
	for _, c := range b.jar.Cookies(req.URL) {
		mode := b.sameSite[req.URL.Hostname()+"\x00"+c.Name]
		switch {
		case !crossSite, mode == http.SameSiteNoneMode:
		case mode == http.SameSiteStrictMode:
			continue
		case req.Method != http.MethodGet: // Lax, and a cookie that names none
			continue
		}
		req.AddCookie(c)
		names = append(names, c.Name)
	}
	return names
}

// keep stores what resp sets, with each cookie's SameSite.
func (b *browser) keep(u *url.URL, resp *http.Response) {
	b.mu.Lock()
	defer b.mu.Unlock()
	set := resp.Cookies()
	b.jar.SetCookies(u, set)
	for _, c := range set {
		b.sameSite[u.Hostname()+"\x00"+c.Name] = c.SameSite
	}
}

func (b *browser) record(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.history = append(b.history, line)
}

// log is every request the browser made, for failure messages.
func (b *browser) log() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return "browser history:\n  " + strings.Join(b.history, "\n  ")
}

// goOn is what a person clicks to go on; stop what they would not.
var (
	goOn = regexp.MustCompile(`(?i)continue|approve|allow|authori[sz]e|sign ?in|log ?in|confirm`)
	stop = regexp.MustCompile(`(?i)deny|cancel|reject|decline`)
)

// form reads the page's form as a person would fill it: every field as
// the page gives it, and the submit button that goes on. A page that
// asks for a password is not this flow's.
func (b *browser) form(t *testing.T, p page) (method string, action *url.URL, values url.Values) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(p.body))
	if err != nil {
		t.Fatalf("the verification page is not HTML: %v\n%s", err, p.body)
	}
	var forms []*html.Node
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "form" {
			forms = append(forms, n)
		}
	}
	if len(forms) != 1 {
		t.Fatalf("the verification page has %d forms, want 1:\n%s", len(forms), p.body)
	}
	f := forms[0]
	method = strings.ToUpper(attr(f, "method"))
	if method == "" {
		method = http.MethodGet
	}
	action, err = p.url.Parse(attr(f, "action"))
	if err != nil {
		t.Fatalf("form action %q: %v", attr(f, "action"), err)
	}
	values = url.Values{}
	var button *html.Node
	for n := range f.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		typ := strings.ToLower(attr(n, "type"))
		switch {
		case n.Data == "input" && typ == "password":
			t.Fatalf("the verification page asks for a password:\n%s", p.body)
		case n.Data == "input" && (typ == "submit" || typ == "image"),
			n.Data == "button" && (typ == "" || typ == "submit"):
			label := attr(n, "value")
			if n.Data == "button" {
				label = textOf(n)
			}
			if goOn.MatchString(label) && !stop.MatchString(label) && button == nil {
				button = n
			}
		case n.Data == "input" && (typ == "checkbox" || typ == "radio"):
			if _, checked := attrOK(n, "checked"); checked && attr(n, "name") != "" {
				values.Add(attr(n, "name"), attr(n, "value"))
			}
		case n.Data == "input" || n.Data == "textarea":
			if name := attr(n, "name"); name != "" {
				v := attr(n, "value")
				if n.Data == "textarea" {
					v = textOf(n)
				}
				values.Add(name, v)
			}
		}
	}
	if button == nil {
		t.Fatalf("the verification page has no button to go on:\n%s", p.body)
	}
	if name := attr(button, "name"); name != "" {
		values.Add(name, attr(button, "value"))
	}
	b.record(fmt.Sprintf("form: %s %s, button %q, fields %v", method, action, strings.TrimSpace(textOf(button)+attr(button, "value")), values))
	return method, action, values
}

// field is the value of the form field named name on p, "" when absent.
func field(p page, name string) string {
	doc, err := html.Parse(strings.NewReader(p.body))
	if err != nil {
		return ""
	}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "input" && attr(n, "name") == name {
			return attr(n, "value")
		}
	}
	return ""
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

// textOf is the text inside n.
func textOf(n *html.Node) string {
	var b bytes.Buffer
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

// loopback reports whether u's host is a loopback name or address: the
// only places the browser may go.
func loopback(u *url.URL) bool {
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}
