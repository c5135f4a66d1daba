package admin

import (
	"time"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
)

// The admin API's wire types. Their JSON names are fixed: tools depend on
// them. The CLI decodes the same types from a running gateway.

// KeyView is a virtual key as the API shows it; the secret is in Key only
// in the answer to its creation.
type KeyView struct {
	ID         string      `json:"id"`
	Object     string      `json:"object"` // "key"
	Key        string      `json:"key,omitempty"`
	Name       string      `json:"name"`
	Prefix     string      `json:"prefix"`
	Models     []string    `json:"models"`
	Metadata   jsonx.Value `json:"metadata"`
	CreatedAt  time.Time   `json:"created_at"`
	ExpiresAt  *time.Time  `json:"expires_at"`
	LastUsedAt *time.Time  `json:"last_used_at"`
	Revoked    bool        `json:"revoked"`
	// Limits are the key's own (configured defaults fill what they leave
	// unset); ModelLimits apply to the key's use of one model each.
	Limits      limit.Limits            `json:"limits"`
	ModelLimits map[string]limit.Limits `json:"model_limits"`
	// UserID is the user the key belongs to, TeamID the team its usage
	// is charged to; null for none.
	UserID *string `json:"user_id"`
	TeamID *string `json:"team_id"`
}

// KeyList is the answer to GET /admin/keys.
type KeyList struct {
	Object string    `json:"object"` // "list"
	Data   []KeyView `json:"data"`
}

// CreateKey is the body of POST /admin/keys.
type CreateKey struct {
	Name      string      `json:"name"`
	Models    []string    `json:"models,omitempty"`
	ExpiresAt *time.Time  `json:"expires_at,omitempty"`
	Metadata  jsonx.Value `json:"metadata,omitempty"`
	// Limits and ModelLimits (by model name or alias) cap the key's use.
	Limits      *limit.Limits           `json:"limits,omitempty"`
	ModelLimits map[string]limit.Limits `json:"model_limits,omitempty"`
	// UserID gives the key to a user; TeamID charges it to a team, of
	// which the user must be a member.
	UserID string `json:"user_id,omitempty"`
	TeamID string `json:"team_id,omitempty"`
}

// Tokens counts tokens by bucket, in the Anthropic convention: Input
// excludes the cache buckets, and Reasoning is part of Output.
type Tokens struct {
	Input        int64 `json:"input"`
	CacheRead    int64 `json:"cache_read"`
	CacheWrite5m int64 `json:"cache_write_5m"`
	CacheWrite1h int64 `json:"cache_write_1h"`
	Output       int64 `json:"output"`
	Reasoning    int64 `json:"reasoning"`
}

// RequestRecord is one ledger record.
type RequestRecord struct {
	ID             string    `json:"id"`
	Time           time.Time `json:"time"`
	KeyID          *string   `json:"key_id"` // null for the master key
	ClientProtocol string    `json:"client_protocol"`
	Endpoint       string    `json:"endpoint"` // "" for records older than the field
	Model          string    `json:"model"`
	CanonicalModel string    `json:"canonical_model"` // the configured model Model resolved to; "" for none
	Provider       string    `json:"provider"`
	UpstreamModel  string    `json:"upstream_model"`
	Lane           string    `json:"lane"`
	Stream         bool      `json:"stream"`
	Status         int       `json:"status"`
	ErrorType      string    `json:"error_type"`
	Tokens         Tokens    `json:"tokens"`
	CostNanoUSD    *int64    `json:"cost_nano_usd"` // null when unpriced
	LatencyMS      float64   `json:"latency_ms"`
	TTFBMS         float64   `json:"ttfb_ms"`
	UpstreamMS     float64   `json:"upstream_ms"`
	OverheadMS     float64   `json:"overhead_ms"`
	ClientIP       string    `json:"client_ip"`
	UserAgent      string    `json:"user_agent"`
	// Attempts lists every upstream attempt: {target, status, error, ms}.
	Attempts jsonx.Value `json:"attempts"`
	// UsageEstimated is true when the gateway estimated Tokens (and so
	// CostNanoUSD) because the upstream never reported usage: the stream
	// was cut, or the client left early.
	UsageEstimated bool `json:"usage_estimated"`
	// CacheSavingsNanoUSD is what prompt caching saved: the cache tokens
	// at the input price less what they cost, negative when cache writes
	// cost more than cache reads saved; null when unknown (unpriced, or
	// recorded before savings were).
	CacheSavingsNanoUSD *int64 `json:"cache_savings_nano_usd"`
	// Units is what the endpoint billed apart from tokens, of kind Unit:
	// "image", "second", "character" or "query" (omitted when none).
	Units int64  `json:"units,omitempty"`
	Unit  string `json:"unit,omitempty"`
	// UserID is the user the request was made for, TeamID the team it
	// is charged to, SessionID the agent session the client named; null
	// for none.
	UserID    *string `json:"user_id"`
	TeamID    *string `json:"team_id"`
	SessionID *string `json:"session_id"`
}

// RequestPage is the answer to GET /admin/requests, newest first. Pass
// LastID as after_id for the next page while HasMore.
type RequestPage struct {
	Object  string          `json:"object"` // "list"
	Data    []RequestRecord `json:"data"`
	HasMore bool            `json:"has_more"`
	FirstID *string         `json:"first_id"`
	LastID  *string         `json:"last_id"`
}

// UsageGroup sums the requests of one group.
type UsageGroup struct {
	Group    string `json:"group"`
	Requests int64  `json:"requests"`
	Errors   int64  `json:"errors"`
	Tokens   Tokens `json:"tokens"`
	// CostNanoUSD sums the priced requests; null when none was priced.
	CostNanoUSD *int64 `json:"cost_nano_usd"`
	// UnpricedRequests used tokens of a model without a price: their cost
	// is unknown and not in CostNanoUSD.
	UnpricedRequests int64 `json:"unpriced_requests"`
	// EstimatedRequests had their tokens estimated by the gateway because
	// the upstream never reported usage: their tokens and cost are in the
	// sums, as estimates.
	EstimatedRequests int64 `json:"estimated_requests"`
	// CacheSavingsNanoUSD sums what prompt caching saved the requests whose
	// saving is known (negative when cache writes cost more than cache
	// reads saved); null when none is known.
	CacheSavingsNanoUSD *int64 `json:"cache_savings_nano_usd"`
	// CacheSavingsUnknownRequests have an unknown saving, not in
	// CacheSavingsNanoUSD: their cache tokens, or the input, had no price,
	// or they were recorded before savings were.
	CacheSavingsUnknownRequests int64 `json:"cache_savings_unknown_requests"`
}

// UsageReport is the answer to GET /admin/usage.
type UsageReport struct {
	Object  string       `json:"object"` // "usage"
	Since   time.Time    `json:"since"`
	Until   time.Time    `json:"until"`
	GroupBy string       `json:"group_by"`
	Data    []UsageGroup `json:"data"`
	Total   UsageGroup   `json:"total"`
}

// ErrorBody is every admin error's envelope.
type ErrorBody struct {
	Type  string    `json:"type"` // "error"
	Error ErrorInfo `json:"error"`
}

// ErrorInfo describes an admin error.
type ErrorInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// TeamRef names a team a user belongs to.
type TeamRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// UserView is a person as the API shows them.
type UserView struct {
	ID            string    `json:"id"`
	Object        string    `json:"object"` // "user"
	Subject       string    `json:"subject"`
	Email         string    `json:"email"`
	Name          string    `json:"name"`
	PrimaryTeamID *string   `json:"primary_team_id"` // null for none
	Teams         []TeamRef `json:"teams"`
	// Limits are the user's own, in a key's shape; Models their own
	// allowlist (empty: the teams' decide).
	Limits     limit.Limits `json:"limits"`
	Models     []string     `json:"models"`
	Disabled   bool         `json:"disabled"`
	Admin      bool         `json:"admin"`
	Source     string       `json:"source"` // "idp" | "admin"
	CreatedAt  time.Time    `json:"created_at"`
	LastSeenAt *time.Time   `json:"last_seen_at"`
}

// UserList is the answer to GET /admin/users and GET /admin/teams/{id}/members.
type UserList struct {
	Object string     `json:"object"` // "list"
	Data   []UserView `json:"data"`
}

// CreateUser is the body of POST /admin/users. A primary team makes the
// user its member.
type CreateUser struct {
	Subject       string        `json:"subject"`
	Email         string        `json:"email,omitempty"`
	Name          string        `json:"name,omitempty"`
	PrimaryTeamID string        `json:"primary_team_id,omitempty"`
	Limits        *limit.Limits `json:"limits,omitempty"`
	Models        []string      `json:"models,omitempty"`
	Disabled      bool          `json:"disabled,omitempty"`
	Admin         bool          `json:"admin,omitempty"`
}

// ClaudeCode is a team's Claude Code settings: ManagedSettings is served
// to its members' Claude Code as managed settings.
type ClaudeCode struct {
	ManagedSettings jsonx.Value `json:"managed_settings,omitempty"`
}

// TeamView is a team as the API shows it.
type TeamView struct {
	ID        string   `json:"id"`
	Object    string   `json:"object"` // "team"
	Name      string   `json:"name"`
	IDPGroups []string `json:"idp_groups"`
	Models    []string `json:"models"`
	// Limits hold for all members together, MemberLimits for each member
	// without limits of their own.
	Limits       limit.Limits `json:"limits"`
	MemberLimits limit.Limits `json:"member_limits"`
	ClaudeCode   ClaudeCode   `json:"claude_code"`
	Source       string       `json:"source"` // "config" | "admin"
	Members      int          `json:"members"`
	CreatedAt    time.Time    `json:"created_at"`
	UpdatedAt    time.Time    `json:"updated_at"`
}

// TeamList is the answer to GET /admin/teams.
type TeamList struct {
	Object string     `json:"object"` // "list"
	Data   []TeamView `json:"data"`
}

// CreateTeam is the body of POST /admin/teams.
type CreateTeam struct {
	Name         string        `json:"name"`
	IDPGroups    []string      `json:"idp_groups,omitempty"`
	Models       []string      `json:"models,omitempty"`
	Limits       *limit.Limits `json:"limits,omitempty"`
	MemberLimits *limit.Limits `json:"member_limits,omitempty"`
	ClaudeCode   *ClaudeCode   `json:"claude_code,omitempty"`
}

// AuditEventView is one entry of the audit log.
type AuditEventView struct {
	ID         int64       `json:"id"`     // orders the events
	Object     string      `json:"object"` // "audit_event"
	Time       time.Time   `json:"time"`
	ActorKind  string      `json:"actor_kind"` // master, user, key or system
	ActorID    *string     `json:"actor_id"`   // null for the master key and the system
	Action     string      `json:"action"`
	TargetKind string      `json:"target_kind"`
	TargetID   *string     `json:"target_id"`
	Detail     jsonx.Value `json:"detail"`
	ClientIP   string      `json:"client_ip"`
	RequestID  string      `json:"request_id"`
}

// AuditPage is the answer to GET /admin/audit, newest first. Pass LastID
// as before for the next page while HasMore.
type AuditPage struct {
	Object  string           `json:"object"` // "list"
	Data    []AuditEventView `json:"data"`
	HasMore bool             `json:"has_more"`
	FirstID *int64           `json:"first_id"`
	LastID  *int64           `json:"last_id"`
}

// SessionView sums one agent session: the records a client such as
// Claude Code marked with one session id, of one key and user.
type SessionView struct {
	SessionID string    `json:"session_id"`
	Object    string    `json:"object"`  // "agent_session"
	KeyID     *string   `json:"key_id"`  // null for the master key
	UserID    *string   `json:"user_id"` // null for none
	TeamID    *string   `json:"team_id"` // of its latest request; null for none
	Model     string    `json:"model"`   // of its latest request, as the client named it
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Requests  int64     `json:"requests"`
	Tokens    struct {
		Input      int64 `json:"input"`
		CacheRead  int64 `json:"cache_read"`
		CacheWrite int64 `json:"cache_write"` // both lifetimes
		Output     int64 `json:"output"`
	} `json:"tokens"`
	// CostNanoUSD sums the priced requests; null when none was priced.
	CostNanoUSD *int64 `json:"cost_nano_usd"`
	// CacheReadShare is the share of the prompt tokens read from the
	// cache, 0 to 1: how well the session kept its prompt cache warm.
	CacheReadShare float64 `json:"cache_read_share"`
}

// SessionList is the answer to GET /admin/sessions, the most recently
// active first.
type SessionList struct {
	Object string        `json:"object"` // "list"
	Data   []SessionView `json:"data"`
}
