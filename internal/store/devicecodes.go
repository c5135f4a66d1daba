package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// DeviceCode is a device authorisation (RFC 8628) in progress, kept here
// so that whichever replica the device polls knows what the browser
// decided on another.
type DeviceCode struct {
	Hash     []byte // SHA-256 of the device code
	UserCode string // normalised: upper case, no dash ("WDJBMJHT"); unique among the unexpired
	Status   string // DevicePending | DeviceApproved | DeviceDenied | DeviceConsumed
	// UserID and TeamID are set when the user approves.
	UserID, TeamID       string
	Interval             int // the least seconds between polls
	CreatedAt, ExpiresAt time.Time
	LastPollAt           *time.Time
}

// Device code states.
const (
	DevicePending  = "pending"
	DeviceApproved = "approved"
	DeviceDenied   = "denied"
	// DeviceConsumed is an approval the device has collected
	// (RedeemDevice): its tokens were given out once.
	DeviceConsumed = "consumed"
)

var (
	// ErrDuplicateUserCode is a user code that an unexpired device code
	// already has: the caller draws another.
	ErrDuplicateUserCode = errors.New("user code in use")
	// ErrDeviceNotPending is a decision on a device code already decided,
	// or the redemption of one not approved (or redeemed already).
	ErrDeviceNotPending = errors.New("device code already decided")
)

const deviceColumns = "hash, user_code, status, user_id, team_id, interval_s, created_at, expires_at, last_poll_at"

// CreateDeviceCode stores a new device code. An expired one that held the
// same user code (at d.CreatedAt) is deleted first.
func (s *Store) CreateDeviceCode(ctx context.Context, d DeviceCode) error {
	if d.Status == "" {
		d.Status = DevicePending
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.rebind("DELETE FROM device_codes WHERE user_code = ? AND expires_at <= ?"),
			cleanText(d.UserCode), d.CreatedAt.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, s.rebind("INSERT INTO device_codes ("+deviceColumns+") VALUES (?,?,?,?,?,?,?,?,?)"),
			d.Hash, cleanText(d.UserCode), cleanText(d.Status), cleanText(d.UserID), cleanText(d.TeamID), d.Interval,
			d.CreatedAt.UnixMilli(), d.ExpiresAt.UnixMilli(), millisOrNil(d.LastPollAt))
		if err != nil && isUniqueViolation(err) {
			return ErrDuplicateUserCode
		}
		return err
	})
}

// DeviceByUserCode returns the device code of a user code unless it has
// expired at now; IsNotFound(err) otherwise.
func (s *Store) DeviceByUserCode(ctx context.Context, userCode string, now time.Time) (DeviceCode, error) {
	return scanDevice(s.db.QueryRowContext(ctx, s.rebind("SELECT "+deviceColumns+" FROM device_codes WHERE user_code = ? AND expires_at > ?"),
		cleanText(userCode), now.UnixMilli()))
}

// DecideDevice approves (for userID, charged to teamID) or denies a
// pending device code unexpired at now. ErrDeviceNotPending when it was
// decided already; IsNotFound(err) when there is none, or it expired.
func (s *Store) DecideDevice(ctx context.Context, userCode string, approve bool, userID, teamID string, now time.Time) error {
	status := DeviceDenied
	if approve {
		status = DeviceApproved
	}
	res, err := s.db.ExecContext(ctx, s.rebind("UPDATE device_codes SET status = ?, user_id = ?, team_id = ? "+
		"WHERE user_code = ? AND status = ? AND expires_at > ?"),
		status, cleanText(userID), cleanText(teamID), cleanText(userCode), DevicePending, now.UnixMilli())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	if _, err := s.DeviceByUserCode(ctx, userCode, now); err != nil {
		return err
	}
	return ErrDeviceNotPending
}

// SealDeviceIdP keeps the IdP's refresh token (sealed by the caller) with
// a pending device code, before DecideDevice approves it: RedeemDevice
// gives it to the sign-in's family. IsNotFound(err) when no pending code
// unexpired at now has this user code.
func (s *Store) SealDeviceIdP(ctx context.Context, userCode string, sealed []byte, now time.Time) error {
	res, err := s.db.ExecContext(ctx, s.rebind("UPDATE device_codes SET idp_refresh = ? WHERE user_code = ? AND status = ? AND expires_at > ?"),
		sealed, cleanText(userCode), DevicePending, now.UnixMilli())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	return errNoRows
}

// PollDevice records a poll of the device at now and returns its code as
// it stands: an approved code stays approved until RedeemDevice gives
// out its tokens. slowDown is true when the poll before came less than
// Interval seconds before now (this one is recorded all the same).
// IsNotFound(err) when there is none.
//
// The poll is a compare-and-set on the row as read, retried when another
// poll changed it in between, so that two polls at once cannot both
// miss a slow-down.
func (s *Store) PollDevice(ctx context.Context, hash []byte, now time.Time) (d DeviceCode, slowDown bool, err error) {
	ms := now.UnixMilli()
	for {
		d, err = scanDevice(s.db.QueryRowContext(ctx, s.rebind("SELECT "+deviceColumns+" FROM device_codes WHERE hash = ?"), hash))
		if err != nil {
			return DeviceCode{}, false, err
		}
		prev := int64(-1)
		if d.LastPollAt != nil {
			prev = d.LastPollAt.UnixMilli()
		}
		res, err := s.db.ExecContext(ctx, s.rebind("UPDATE device_codes SET last_poll_at = ? "+
			"WHERE hash = ? AND COALESCE(last_poll_at, -1) = ?"), ms, hash, prev)
		if err != nil {
			return DeviceCode{}, false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return DeviceCode{}, false, err
		} else if n == 0 {
			continue // another poll came between
		}
		slowDown = d.LastPollAt != nil && now.Sub(*d.LastPollAt) < time.Duration(d.Interval)*time.Second
		t := now.UTC().Truncate(time.Millisecond)
		d.LastPollAt = &t
		return d, slowDown, nil
	}
}

// RedeemDevice collects an approved device code at now: in one
// transaction it marks the code DeviceConsumed and stores the sign-in f
// with its first tokens (as CreateTokenFamily), so that the code is
// consumed only if the tokens are stored, and of two polls at once only
// one gets them. f must be for the user and team the code was approved
// for; without an IdP refresh token of its own, f takes the one sealed
// with the code (SealDeviceIdP). IsNotFound(err) when there is no such code, ErrTokenInvalid when
// it expired, ErrDeviceNotPending when it is not approved (pending,
// denied or consumed already).
func (s *Store) RedeemDevice(ctx context.Context, hash []byte, now time.Time, f TokenFamily, tokens ...Token) error {
	ms := now.UnixMilli()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var userID, teamID string
		var sealed []byte
		err := tx.QueryRowContext(ctx, s.rebind("UPDATE device_codes SET status = ? WHERE hash = ? AND status = ? AND expires_at > ? "+
			"RETURNING user_id, team_id, idp_refresh"), DeviceConsumed, hash, DeviceApproved, ms).Scan(&userID, &teamID, &sealed)
		if IsNotFound(err) {
			d, err := scanDevice(tx.QueryRowContext(ctx, s.rebind("SELECT "+deviceColumns+" FROM device_codes WHERE hash = ?"), hash))
			switch {
			case err != nil:
				return err
			case !now.Before(d.ExpiresAt):
				return ErrTokenInvalid
			default:
				return ErrDeviceNotPending
			}
		}
		if err != nil {
			return err
		}
		if f.UserID != userID || f.TeamID != teamID {
			return fmt.Errorf("store: the device code was approved for user %q in team %q, not %q in %q", userID, teamID, f.UserID, f.TeamID)
		}
		if f.IdPRefresh == nil {
			f.IdPRefresh = sealed
		}
		return s.createFamily(ctx, tx, f, tokens)
	})
}

// PurgeAuthFlows deletes the device codes and browser sign-in flows that
// expired before before, and returns how many.
func (s *Store) PurgeAuthFlows(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for _, table := range []string{"device_codes", "login_flows"} {
		res, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM "+table+" WHERE expires_at < ?"), before.UnixMilli())
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

func scanDevice(row *sql.Row) (DeviceCode, error) {
	var d DeviceCode
	var created, expires int64
	var polled sql.NullInt64
	if err := row.Scan(&d.Hash, &d.UserCode, &d.Status, &d.UserID, &d.TeamID, &d.Interval, &created, &expires, &polled); err != nil {
		return DeviceCode{}, err
	}
	d.CreatedAt, d.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	d.LastPollAt = timeOrNil(polled)
	return d, nil
}
