package admin

import (
	"context"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/jsonx"
	"github.com/tollgate/tollgate/internal/limit"
)

// The handlers of users, teams and their memberships.

func (h *handler) createUser(w http.ResponseWriter, r *http.Request) error {
	var req CreateUser
	if err := readJSON(r, &req); err != nil {
		return err
	}
	u, err := h.s.CreateUser(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, u)
}

func (h *handler) listUsers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if err := onlyParams(q, "team_id", "q"); err != nil {
		return err
	}
	l, err := h.s.Users(r.Context(), UserQuery{TeamID: q.Get("team_id"), Query: q.Get("q")})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l)
}

func (h *handler) patchUser(w http.ResponseWriter, r *http.Request) error {
	var p UserPatch
	err := readPatch(r, "a user's email, name, primary_team_id, limits, models, disabled and admin can be changed",
		func(name string, v jsontext.Value) (bool, error) {
			switch name {
			case "email":
				p.Email = new(string)
				return true, jsonx.Unmarshal(v, p.Email)
			case "name":
				p.Name = new(string)
				return true, jsonx.Unmarshal(v, p.Name)
			case "primary_team_id":
				p.PrimaryTeamID = new(string) // null: none
				return true, jsonx.Unmarshal(v, p.PrimaryTeamID)
			case "limits":
				p.Limits = new(limit.Limits)
				return true, jsonx.UnmarshalStrict(v, p.Limits) // null: no limits of their own
			case "models":
				p.Models = new([]string)
				err := jsonx.Unmarshal(v, p.Models)
				if *p.Models == nil {
					*p.Models = []string{}
				}
				return true, err
			case "disabled":
				p.Disabled = new(bool)
				return true, jsonx.Unmarshal(v, p.Disabled)
			case "admin":
				p.Admin = new(bool)
				return true, jsonx.Unmarshal(v, p.Admin)
			case "subject", "source", "id":
				return true, invalid("%s: cannot be changed; delete the user and create another", name)
			}
			return false, nil
		})
	if err != nil {
		return err
	}
	u, err := h.s.UpdateUser(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, u)
}

func (h *handler) createTeam(w http.ResponseWriter, r *http.Request) error {
	var req CreateTeam
	if err := readJSON(r, &req); err != nil {
		return err
	}
	t, err := h.s.CreateTeam(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, t)
}

func (h *handler) listTeams(w http.ResponseWriter, r *http.Request) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	l, err := h.s.Teams(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l)
}

func (h *handler) patchTeam(w http.ResponseWriter, r *http.Request) error {
	var p TeamPatch
	err := readPatch(r, "a team's name, idp_groups, models, limits, member_limits and claude_code can be changed",
		func(name string, v jsontext.Value) (bool, error) {
			switch name {
			case "name":
				p.Name = new(string)
				return true, jsonx.Unmarshal(v, p.Name)
			case "idp_groups", "models":
				l := []string{}
				err := jsonx.Unmarshal(v, &l)
				if l == nil {
					l = []string{} // null: none
				}
				if name == "models" {
					p.Models = &l
				} else {
					p.IDPGroups = &l
				}
				return true, err
			case "limits", "member_limits":
				l := new(limit.Limits)
				if name == "limits" {
					p.Limits = l
				} else {
					p.MemberLimits = l
				}
				return true, jsonx.UnmarshalStrict(v, l)
			case "claude_code":
				p.ClaudeCode = new(*ClaudeCode)
				return true, jsonx.UnmarshalStrict(v, p.ClaudeCode)
			case "source", "id":
				return true, invalid("%s: cannot be changed", name)
			}
			return false, nil
		})
	if err != nil {
		return err
	}
	t, err := h.s.UpdateTeam(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// byID serves call on the path's id, answering what it returns.
func byID[T any](call func(context.Context, string) (T, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := call(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, v)
	}
}

// member serves call on the path's team and user.
func member(call func(ctx context.Context, teamID, userID string) (UserView, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		u, err := call(r.Context(), r.PathValue("id"), r.PathValue("user_id"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, u)
	}
}

// readPatch reads a PATCH body's fields in turn into field, which says
// whether it knows a name; an unknown one is refused with changeable,
// which names those that are not.
func readPatch(r *http.Request, changeable string, field func(name string, v jsontext.Value) (bool, error)) error {
	var fields map[string]jsontext.Value
	if err := readJSON(r, &fields); err != nil {
		return err
	}
	for name, v := range fields {
		known, err := field(name, v)
		if !known {
			return invalid("unknown field %q; %s", name, changeable)
		}
		if e, ok := err.(*Error); ok {
			return e
		}
		if err != nil {
			_, msg := jsonx.ExplainAt(name, err)
			return invalid("%s", msg)
		}
	}
	return nil
}
