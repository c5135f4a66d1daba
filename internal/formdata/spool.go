package formdata

import (
	"io"
	"os"
	"sync"
)

// spool holds the contents of file parts read before the wanted field: in
// memory up to limit bytes, then (all of it) in a temporary file in dir.
//
// Reading back and close are locked: an HTTP transport may still be reading
// the body it was given when the handler returns and closes the Form.
type spool struct {
	limit int64
	dir   string
	size  int64
	err   error // the first error writing, which is not the client's fault

	mu   sync.Mutex
	mem  []byte
	file *os.File
	gone bool // closed: nothing can be read back
}

func (s *spool) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.write(p)
	s.size += int64(n)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *spool) write(p []byte) (int, error) {
	if s.gone {
		return 0, os.ErrClosed
	}
	if s.file == nil && s.size+int64(len(p)) <= s.limit {
		if need := len(s.mem) + len(p); need > cap(s.mem) {
			// Double up to the limit: append grows big slices by a
			// quarter, which allocates five times the final size.
			m := make([]byte, len(s.mem), min(max(2*cap(s.mem), need, 4096), int(s.limit)))
			copy(m, s.mem)
			s.mem = m
		}
		s.mem = append(s.mem, p...)
		return len(p), nil
	}
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "formdata-*")
		if err != nil {
			return 0, err
		}
		s.file = f
		if _, err := f.Write(s.mem); err != nil {
			return 0, err
		}
		s.mem = nil // the file holds it now
	}
	return s.file.Write(p)
}

// section reads back n bytes written at off.
func (s *spool) section(off, n int64) io.Reader {
	return io.NewSectionReader(s, off, n)
}

func (s *spool) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.gone:
		return 0, os.ErrClosed
	case s.file != nil:
		return s.file.ReadAt(p, off)
	case off >= int64(len(s.mem)):
		return 0, io.EOF
	}
	return copy(p, s.mem[off:]), nil
}

// close removes the file, if any; it may be called more than once.
func (s *spool) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem, s.gone = nil, true
	if s.file == nil {
		return nil
	}
	f := s.file
	s.file = nil
	err := f.Close()
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}
