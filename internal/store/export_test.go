package store

// InferenceEndpoints are the endpoints whose records are usage.
var InferenceEndpoints = inferenceEndpoints

// ExecForTest runs a statement on the store's database, for a test that
// writes a row as an older release would.
func (s *Store) ExecForTest(q string, args ...any) error {
	_, err := s.db.Exec(s.rebind(q), args...)
	return err
}
